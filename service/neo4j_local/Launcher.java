// Runs an embedded Neo4j with its Bolt connector until the process gets SIGTERM.
// Started by `memtrace neo4j start` as: java -Xmx.. -cp 'lib/*' Launcher.java HOME CONF
// (Java 17 runs a single source file directly, so there is no build step).
import java.nio.file.Path;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;

public class Launcher {
    public static void main(String[] args) throws Exception {
        Path home = Path.of(args[0]);
        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
            .loadPropertiesFromFile(Path.of(args[1]))
            .build();
        // A clean shutdown on SIGTERM flushes the page cache, so the next start needs no recovery.
        Runtime.getRuntime().addShutdownHook(new Thread(dbms::shutdown));
        System.out.println("memtrace-neo4j: started");
        Thread.currentThread().join();
    }
}
