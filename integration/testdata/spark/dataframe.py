# The PySpark job the integration tests submit in cluster mode: a DataFrame grouped by a
# key (a shuffle), its rows printed in key order as "k=K n=N s=S" (the test computes the
# same figures).
from pyspark.sql import SparkSession, functions as F

spark = SparkSession.builder.appName("bobbin-dataframe").getOrCreate()
df = spark.createDataFrame([(i % 7, i) for i in range(10000)], ["k", "v"]).repartition(4)
for r in df.groupBy("k").agg(F.count("*").alias("n"), F.sum("v").alias("s")).orderBy("k").collect():
    print("k=%d n=%d s=%d" % (r["k"], r["n"], r["s"]))
spark.stop()
