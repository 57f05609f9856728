package dev.stoker.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;

/** The Spark session Stoker's jobs run in when they start their own. */
final class SparkJobs {
    private SparkJobs() {
    }

    /**
     * A session on {@code master} ({@code local[N]} runs in this JVM; under {@code spark-submit}
     * the master it was given wins), without the web UI. Spark's console progress bar shows each
     * job's tasks as they finish.
     */
    static SparkSession session(String master, String name) {
        SparkSession.Builder b = SparkSession.builder().appName(name).config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "true");
        if (master != null && !master.isBlank()) {
            b.master(master);
        }
        if (master != null && master.startsWith("local")) {
            b.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1");
        }
        return b.getOrCreate();
    }

    /**
     * Ends {@code spark}: its progress bar cleared first (a job that failed leaves it drawn, and
     * the error's one line follows it on the terminal), then the session stopped.
     */
    static void stop(SparkSession spark) {
        scala.Option<org.apache.spark.ui.ConsoleProgressBar> bar = spark.sparkContext().progressBar();
        if (bar.isDefined()) {
            bar.get().finishAll();
        }
        spark.stop();
    }

    /** A job of {@code n} tasks, task {@code i} given {@code i}, described in Spark's progress and logs. */
    static JavaRDD<Integer> tasks(SparkSession spark, int n, String description) {
        List<Integer> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ids.add(i);
        }
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        jsc.setJobDescription(description);
        return jsc.parallelize(ids, n);
    }
}
