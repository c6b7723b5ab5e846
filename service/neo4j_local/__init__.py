"""A real Neo4j on machines without Docker: embedded Neo4j + Bolt from Maven Central jars.

``start`` fetches the jars of ``org.neo4j:neo4j`` and ``org.neo4j:neo4j-bolt`` (the version in
``service.settings.NEO4J_VERSION``) with Maven into ``<dir>/lib-<version>`` the first time, writes a
``neo4j.conf`` into the instance folder, runs ``Launcher.java`` detached, waits until a Bolt query
succeeds and records the PID. ``stop`` sends SIGTERM to that PID (a clean shutdown), then SIGKILL
after a grace period. Auth is off and Bolt listens on 127.0.0.1 only: this is a local developer
and test database, not a deployment (use docker-compose.yml for that).
"""

from service.neo4j_local.launcher import LocalNeo4j, Neo4jLaunchError

__all__ = ["LocalNeo4j", "Neo4jLaunchError"]
