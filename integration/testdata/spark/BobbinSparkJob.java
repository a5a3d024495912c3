// The Spark application the integration tests submit with Spark's Maven jars, which
// carry no examples jar: the tests compile it with javac against Spark's jars.
//
//   pi SLICES             SparkPi's estimate, printed "Pi is roughly X"
//   wordcount IN OUT      counts the words of the files under IN (a shuffle), writes
//                         "word<TAB>count" lines to OUT and prints "words: N distinct: M"
//   sleep SECONDS SLICES  tasks that sleep, so a test can act on a running application
//   dynamic IN OUT        the word count in two actions with every executor released
//                         between them (dynamic allocation): the second reads the first's
//                         shuffle output through the node's external shuffle service;
//                         prints "executors left: N" before the second
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import scala.Tuple2;

public final class BobbinSparkJob {
  public static void main(String[] args) throws Exception {
    JavaSparkContext sc = new JavaSparkContext(new SparkConf().setAppName("BobbinSparkJob " + String.join(" ", args)));
    try {
      switch (args[0]) {
        case "pi": {
          int slices = Integer.parseInt(args[1]);
          int n = 100000 * slices;
          List<Integer> xs = new ArrayList<>(n);
          for (int i = 0; i < n; i++) {
            xs.add(i);
          }
          long inside = sc.parallelize(xs, slices).filter(i -> {
            double x = Math.random() * 2 - 1, y = Math.random() * 2 - 1;
            return x * x + y * y <= 1;
          }).count();
          System.out.println("Pi is roughly " + 4.0 * inside / n);
          break;
        }
        case "wordcount": {
          JavaPairRDD<String, Integer> counts = sc.textFile(args[1], 6)
              .flatMap(line -> Arrays.asList(line.split("\\s+")).iterator())
              .filter(w -> !w.isEmpty())
              .mapToPair(w -> new Tuple2<>(w, 1))
              .reduceByKey(Integer::sum, 4);
          Map<String, Integer> sorted = new TreeMap<>(counts.collectAsMap());
          StringBuilder out = new StringBuilder();
          long words = 0;
          for (Map.Entry<String, Integer> e : sorted.entrySet()) {
            out.append(e.getKey()).append('\t').append(e.getValue()).append('\n');
            words += e.getValue();
          }
          Files.write(Paths.get(args[2]), out.toString().getBytes(StandardCharsets.UTF_8));
          System.out.println("words: " + words + " distinct: " + sorted.size());
          break;
        }
        case "dynamic": {
          JavaPairRDD<String, Integer> counts = sc.textFile(args[1], 6)
              .flatMap(line -> Arrays.asList(line.split("\\s+")).iterator())
              .filter(w -> !w.isEmpty())
              .mapToPair(w -> new Tuple2<>(w, 1))
              .reduceByKey(Integer::sum, 4);
          System.out.println("distinct: " + counts.count());
          // The executors idle out (spark.dynamicAllocation.executorIdleTimeout); the
          // status tracker lists the driver too.
          long deadline = System.currentTimeMillis() + 180_000;
          while (sc.sc().statusTracker().getExecutorInfos().length > 1 && System.currentTimeMillis() < deadline) {
            Thread.sleep(250);
          }
          System.out.println("executors left: " + (sc.sc().statusTracker().getExecutorInfos().length - 1));
          Map<String, Integer> sorted = new TreeMap<>(counts.collectAsMap());
          StringBuilder out = new StringBuilder();
          for (Map.Entry<String, Integer> e : sorted.entrySet()) {
            out.append(e.getKey()).append('\t').append(e.getValue()).append('\n');
          }
          Files.write(Paths.get(args[2]), out.toString().getBytes(StandardCharsets.UTF_8));
          break;
        }
        case "sleep": {
          long ms = Long.parseLong(args[1]) * 1000;
          int slices = Integer.parseInt(args[2]);
          List<Integer> xs = new ArrayList<>();
          for (int i = 0; i < slices; i++) {
            xs.add(i);
          }
          long done = sc.parallelize(xs, slices).map(i -> {
            Thread.sleep(ms);
            return i;
          }).count();
          System.out.println("slept in " + done + " tasks");
          break;
        }
        default:
          throw new IllegalArgumentException("unknown job " + args[0]);
      }
    } finally {
      sc.stop();
    }
  }
}
