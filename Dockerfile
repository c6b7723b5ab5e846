# The MemTrace service. Neo4j runs beside it (see docker-compose.yml).
FROM python:3.11-slim AS base

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app

# Dependency layer first: it changes far less often than the code.
# The wire models live in the client distribution (clients/python): install it from the source
# tree first, so the server's "memtrace-client" requirement never resolves against an index.
COPY clients/python ./clients/python
RUN pip install ./clients/python
COPY pyproject.toml README.md ./
RUN python -c "import tomllib; print('\n'.join(d for d in tomllib.load(open('pyproject.toml','rb'))['project']['dependencies'] if not d.startswith('memtrace-client')))" > /tmp/requirements.txt \
 && pip install -r /tmp/requirements.txt

COPY service ./service
COPY cli ./cli
COPY graph_schema ./graph_schema
COPY cypher ./cypher
COPY ingest ./ingest
COPY examples ./examples
RUN pip install --no-deps .

RUN useradd --create-home --uid 10001 memtrace
USER memtrace

# A deployed service never runs open: without MEMTRACE_API_KEYS or MEMTRACE_API_KEYS_FILE it
# refuses to start (set MEMTRACE_AUTH_REQUIRED=false to opt out explicitly).
ENV MEMTRACE_HOST=0.0.0.0 MEMTRACE_PORT=8000 MEMTRACE_AUTH_REQUIRED=true
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=5 \
  CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2)"
CMD ["memtrace", "serve"]
