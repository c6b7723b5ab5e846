"""Trace LangMem's memory store manager (package ``langmem``) as extractions on a traced store.

    from langmem import create_memory_store_manager
    from memtrace_client.adapters.langgraph import trace_store
    from memtrace_client.adapters.langmem import trace_manager
    store = trace_store(InMemoryStore(index=...), MemTraceClient(url, project="my-agent"))
    manager = trace_manager(create_memory_store_manager(model, namespace=("memories", "{user}")))
    graph = builder.compile(store=store)         # the manager finds the traced store in the graph
    manager.invoke({"messages": state["messages"]}, config)   # in a node, as before

Each call of the manager (``invoke``, ``ainvoke``, ``await manager(messages)``) is recorded as
``langmem.extract`` (extraction), consuming the messages it was given, and everything the manager
writes through the traced store during the call as that extraction's work, by the store's own
conventions (``memtrace_client.adapters.langgraph``): each memory it inserts or rewrites is a fact
the extraction produced and a ``langgraph.put`` (update) consuming that fact and the entry's
previous version; each memory it removes a ``langgraph.delete`` (deletion) consuming the messages
and the version removed. The searches the manager makes for the memories it already holds are
recorded as ``langgraph.search`` retrievals marked with the extraction's id, not as searches an
answer read. So a fact the messages held but the manager never wrote is an ExtractionError at
``langmem.extract``; a memory it rewrote without it an UpdateError at that ``langgraph.put``; a
memory it removed a DeletionError at that ``langgraph.delete``. The extraction does not consume
the memories it searched: the put that replaces a version consumes it, which is where an update
loses what the old version said (as for any put on the traced store).

Where it hooks in, and why: the wrapper opens the traced store's ``extracting`` block (a context
variable) around the manager's own ``invoke``/``ainvoke``, and the store records every write it
sees inside the block as the extraction's. Only the wrapper knows the messages (the manager's
input), and only the store sees the writes. LangMem makes its searches and writes from worker
threads (``get_executor_for_config``, which copies the caller's context into each task) or
``asyncio.gather`` tasks (which copy it too), so the block reaches every one of them and nothing
else: two managers running at once on other threads or tasks keep their own. The manager itself is
not changed or patched (its prompts, trustcall's tool calls and retries are its own business), and
LangChain callbacks would not do: they see the messages, but not which store writes came from
the call.

``create_memory_manager`` (the manager without a store) only returns memories: the caller puts
them, so the caller's ``with store.extracting(messages):`` around the call and the puts records
the same thing; it is not wrapped here.

Messages with an ``id`` (as ``add_messages`` gives a graph's state) are one unit however many calls
read them; ``store.message_unit(message)`` returns that unit, e.g. as a case's evidence.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from langchain_core.messages import convert_to_messages
from langchain_core.runnables import Runnable, RunnableConfig
from langmem.knowledge.extraction import MemoryStoreManager

from memtrace_client.adapters.answering import package_version
from memtrace_client.adapters.langgraph import MessageLike, TracedStore
from memtrace_client.tracer import Operation

EXTRACT = "langmem.extract"


def langmem_version() -> str:
    return package_version("langmem")


class TracedManager(Runnable[dict[str, Any], list[dict[str, Any]]]):
    """A LangMem ``MemoryStoreManager`` whose calls are recorded as extractions, on the traced
    store it writes to. An attribute the wrapper lacks (the manager's ``model``, ``namespace``,
    ``store``...) is read from the wrapped manager; what every ``Runnable`` has (its name and
    schemas, ``batch``, ``stream``) is the wrapper's own, and only ``invoke`` and ``ainvoke``
    (which ``batch`` and ``stream`` fall back on) record."""

    def __init__(self, manager: MemoryStoreManager) -> None:
        self.manager = manager
        self.version = langmem_version()

    def __getattr__(self, name: str) -> Any:
        if name == "manager":  # not set yet (during __init__): no recursion into itself
            raise AttributeError(name)
        return getattr(self.manager, name)

    @property
    def store(self) -> TracedStore:
        """The traced store the manager writes to: the one it was made with (``store=``), else
        the graph's it runs in (LangMem's own rule)."""
        store = self.manager.store
        if not isinstance(store, TracedStore):
            raise TypeError(
                "trace_manager: the manager writes to an untraced store "
                f"({type(store).__name__}); wrap it with trace_store(...) first"
            )
        return store

    @contextmanager
    def _extraction(self, input: dict[str, Any]) -> Iterator[Operation]:
        store = self.store
        messages = convert_to_messages(input["messages"])
        model = getattr(self.manager.model, "model_name", None) or type(self.manager.model).__name__
        with store.extracting(
            messages, name=EXTRACT, langmem_version=self.version, model=str(model)
        ) as op:
            yield op

    def invoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[dict[str, Any]]:
        with self._extraction(input):
            result: list[dict[str, Any]] = self.manager.invoke(input, config, **kwargs)
        return result

    async def ainvoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[dict[str, Any]]:
        with self._extraction(input):
            result: list[dict[str, Any]] = await self.manager.ainvoke(input, config, **kwargs)
        return result

    async def __call__(self, messages: Sequence[MessageLike]) -> list[dict[str, Any]]:
        """``await manager(messages)``, as LangMem's own manager is called."""
        return await self.ainvoke({"messages": messages})


def trace_manager(manager: MemoryStoreManager) -> TracedManager:
    """Wrap ``manager`` (``langmem.create_memory_store_manager(...)``) so that each call is
    recorded as an extraction; the store it writes to (its ``store=``, or the graph's) must be a
    ``TracedStore``."""
    if not isinstance(manager, MemoryStoreManager):
        raise TypeError(
            "trace_manager takes langmem's memory store manager (create_memory_store_manager), "
            f"not {type(manager).__name__}; create_memory_manager writes nothing: put what it "
            "returns inside store.extracting(messages)"
        )
    return TracedManager(manager)
