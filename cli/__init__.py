"""The ``memtrace`` command line (``cli.main``): a client of the service over HTTP, kept apart
from the server package ``service``. It imports from ``service`` only the settings, the local
Neo4j launcher (``memtrace neo4j``) and the report page renderer (``memtrace report --html``)."""
