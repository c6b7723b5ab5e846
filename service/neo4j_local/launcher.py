"""Start, stop and inspect one local Neo4j instance. See the package docstring."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from neo4j import GraphDatabase
from neo4j.exceptions import DriverError, Neo4jError

from cypher import query
from service.processes import NotReady, spawn, wait_ready
from service.settings import NEO4J_VERSION, Settings


def _megabytes(size: str) -> int:
    """A JVM size such as ``2g``, ``512m`` or ``1024k`` in megabytes."""
    units = {"k": 1 / 1024, "m": 1, "g": 1024}
    unit = size[-1].lower()
    return int(float(size[:-1]) * units[unit]) if unit in units else int(size) // 2**20


class Neo4jLaunchError(RuntimeError):
    """The local Neo4j could not be fetched, started or stopped; the message says why."""


@dataclass(frozen=True)
class LocalNeo4j:
    """One instance: jars shared under ``cache_dir``, data and PID file under ``home``."""

    cache_dir: Path
    home: Path
    port: int
    heap: str = "2g"
    pagecache: str = "2g"
    version: str = NEO4J_VERSION

    @property
    def transaction_memory(self) -> str:
        """Most heap one transaction may use: a quarter of the heap."""
        return f"{max(_megabytes(self.heap) // 4, 64)}m"

    @property
    def total_transaction_memory(self) -> str:
        """Most heap all transactions together may use: 70% of it (the rest for Neo4j itself)."""
        return f"{max(_megabytes(self.heap) * 7 // 10, 128)}m"

    @classmethod
    def from_settings(cls, settings: Settings) -> LocalNeo4j:
        return cls(
            cache_dir=settings.local_neo4j_dir,
            home=settings.local_neo4j_home or settings.local_neo4j_dir / "instance",
            port=settings.local_neo4j_port,
            heap=settings.local_neo4j_heap,
            pagecache=settings.local_neo4j_pagecache,
        )

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    @property
    def lib_dir(self) -> Path:
        return self.cache_dir / f"lib-{self.version}"

    @property
    def pid_file(self) -> Path:
        return self.home / "neo4j.pid"

    @property
    def log_file(self) -> Path:
        return self.home / "launcher.log"

    # -- jars ---------------------------------------------------------------------------------

    def fetch_jars(self) -> Path:
        """Copy the Neo4j jars from Maven Central into ``lib_dir`` unless already there."""
        if (self.lib_dir / f"neo4j-{self.version}.jar").is_file():
            return self.lib_dir
        if shutil.which("mvn") is None:
            raise Neo4jLaunchError("Maven (mvn) is needed to fetch Neo4j from Maven Central")
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        # Copy into a temporary folder and rename, so an interrupted fetch leaves no half lib.
        staging = Path(tempfile.mkdtemp(prefix="lib-", dir=self.cache_dir))
        pom = resources.files(__package__).joinpath("pom.xml")
        with resources.as_file(pom) as pom_path:
            done = subprocess.run(
                [
                    "mvn",
                    "-q",
                    "-B",
                    "-f",
                    str(pom_path),
                    "dependency:copy-dependencies",
                    f"-Dneo4j.version={self.version}",
                    f"-DoutputDirectory={staging}",
                ],
                capture_output=True,
                text=True,
                check=False,
            )
        if done.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            tail = "\n".join((done.stdout + done.stderr).splitlines()[-15:])
            raise Neo4jLaunchError(f"Maven could not fetch Neo4j {self.version}:\n{tail}")
        if self.lib_dir.exists():  # another process won the race
            shutil.rmtree(staging, ignore_errors=True)
        else:
            staging.rename(self.lib_dir)
        return self.lib_dir

    # -- process ------------------------------------------------------------------------------

    def pid(self) -> int | None:
        """The PID of a running instance started from ``home``, or None."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            return pid
        # A PID can be reused by another program after a crash: check it is our java.
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return pid
        return pid if b"Launcher.java" in cmdline else None

    def answers(self, timeout_s: float = 2.0) -> bool:
        """True when a Bolt query succeeds against the ``neo4j`` database."""
        try:
            with GraphDatabase.driver(
                self.uri, auth=("neo4j", "unused"), connection_timeout=timeout_s
            ) as driver:
                driver.verify_connectivity()
                driver.execute_query("RETURN 1", database_="neo4j")
            return True
        except (DriverError, Neo4jError, OSError):
            return False

    def store_id(self, timeout_s: float = 5.0) -> str:
        """The id of this instance's database, as a service on it reports in ``/readyz``."""
        with GraphDatabase.driver(
            self.uri, auth=("neo4j", "unused"), connection_timeout=timeout_s
        ) as driver:
            records = driver.execute_query(
                query("health/store_id"), database_="neo4j", routing_="r"
            ).records
        return str(records[0]["store_id"])

    def start(self, timeout_s: float = 180.0) -> int:
        """Start (or find running) and wait until Bolt answers; returns the PID."""
        running = self.pid()
        if running is not None and self.answers():
            return running
        if running is None and self.answers():
            raise Neo4jLaunchError(
                f"port {self.port} already answers Bolt but not from {self.home}: "
                "stop that database or choose another port (MEMTRACE_LOCAL_NEO4J_PORT)"
            )
        if shutil.which("java") is None:
            raise Neo4jLaunchError("Java 17+ is needed to run the local Neo4j")
        lib = self.fetch_jars()
        self.home.mkdir(parents=True, exist_ok=True)
        conf = self.home / "neo4j.conf"
        conf.write_text(
            "server.bolt.enabled=true\n"
            f"server.bolt.listen_address=127.0.0.1:{self.port}\n"
            "server.http.enabled=false\n"
            "dbms.security.auth_enabled=false\n"
            f"server.memory.pagecache.size={self.pagecache}\n"
            "db.tx_log.rotation.retention_policy=1 files\n"
            # One query may not take the heap (and with it every other request) down: Neo4j
            # stops a transaction past db.memory.transaction.max with a memory-limit error,
            # and all transactions together past the total.
            f"db.memory.transaction.max={self.transaction_memory}\n"
            f"dbms.memory.transaction.total.max={self.total_transaction_memory}\n"
        )
        launcher = resources.files(__package__).joinpath("Launcher.java")
        with resources.as_file(launcher) as source:
            java = ["java", f"-Xms{self.heap}", f"-Xmx{self.heap}", "-XX:+UseG1GC"]
            command = [*java, "-cp", f"{lib}/*", str(source), str(self.home), str(conf)]
            process = spawn(command, self.log_file, detach=True)  # outlives the CLI
        self.pid_file.write_text(str(process.pid))
        try:
            wait_ready(process, self.answers, timeout_s, poll_s=0.5)
        except NotReady as e:
            if e.returncode is not None:
                self.pid_file.unlink(missing_ok=True)
                raise Neo4jLaunchError(
                    f"Neo4j exited with code {e.returncode}; last lines of "
                    f"{self.log_file}:\n{self._log_tail()}"
                ) from e
            self.stop()
            raise Neo4jLaunchError(
                f"Neo4j did not answer within {timeout_s:.0f}s:\n{self._log_tail()}"
            ) from e
        return process.pid

    def stop(self, grace_s: float = 60.0) -> bool:
        """SIGTERM the instance and wait; SIGKILL after ``grace_s``. False if none was running."""
        pid = self.pid()
        if pid is None:
            self.pid_file.unlink(missing_ok=True)
            return False
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and self._alive(pid):
            time.sleep(0.2)
        if self._alive(pid):
            os.kill(pid, signal.SIGKILL)
        self.pid_file.unlink(missing_ok=True)
        return True

    @staticmethod
    def _alive(pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        # A child we started but nobody reaped shows as a zombie: it is gone for our purposes.
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split()[2]
        except (OSError, IndexError):
            return True
        return state != "Z"

    def _log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return "(no log)"
