"""Adapters that trace existing memory systems with the ``Tracer``.

- ``mem0``: wrap a ``mem0.Memory`` (the ``mem0ai`` package, 1.x classic or 2.x ADD-only);
- ``langgraph``: wrap any LangGraph ``BaseStore`` (the ``langgraph`` package);
- ``graphiti``: wrap a ``Graphiti`` knowledge graph (the ``graphiti-core`` package);
- ``llama_index``: a LlamaIndex ``Memory`` and its blocks (the ``llama-index-core`` package);
- ``openai_agents``: a tracing processor and a traced ``Session`` for the OpenAI Agents SDK (the
  ``openai-agents`` package);
- ``rag``: a plain RAG memory built on the tracer, the reference example to copy.
"""
