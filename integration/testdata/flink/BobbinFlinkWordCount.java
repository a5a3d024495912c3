// A word count on Flink's DataStream API in batch mode, as Flink's own WordCount example:
// Maven Central serves no Flink examples jar for the Flink the tests fetch, so the
// integration tests compile this one against flink-dist. Arguments: INPUT OUTPUT (paths
// that every container sees, file:// on a one-machine cluster).
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.Collector;

public class BobbinFlinkWordCount {
  public static void main(String[] args) throws Exception {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setRuntimeMode(RuntimeExecutionMode.BATCH);
    env.readTextFile(args[0])
        .flatMap((String line, Collector<Tuple2<String, Integer>> out) -> {
          for (String w : line.toLowerCase().split("\\W+")) {
            if (!w.isEmpty()) {
              out.collect(Tuple2.of(w, 1));
            }
          }
        })
        .returns(Types.TUPLE(Types.STRING, Types.INT))
        .keyBy(t -> t.f0)
        .sum(1)
        .map(t -> t.f0 + "\t" + t.f1)
        .writeAsText(args[1], FileSystem.WriteMode.OVERWRITE)
        .setParallelism(1);
    env.execute("BobbinFlinkWordCount");
  }
}
