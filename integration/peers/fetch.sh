#!/usr/bin/env bash
# Fetches the real, unmodified peers the integration tests run against, by pinned
# version, into a cache outside the repository (nothing here is committed):
#
#   $CACHE/spark-3.5.5/jars         Spark 3.5's driver and executor jars (Maven Central,
#                                   spark-3.5-pom.xml)
#   $CACHE/spark-3.5.5/yarn-shuffle its YARN shuffle service and what it needs
#                                   (spark-3.5-shuffle-pom.xml)
#   $CACHE/spark-3.5.5/python/lib   pyspark.zip and py4j's zip, from PyPI's pyspark 3.5.5
#   $CACHE/spark-4.1.4              Spark 4 as PyPI's pyspark 4.1.4 ships it (bin, jars
#                                   with the YARN module, python examples, python/lib);
#                                   Maven Central has no spark-yarn_2.13 4.1
#   $CACHE/hadoop-3.4.2/jars        today's Hadoop (issue 47): the jars of its clients,
#   $CACHE/hadoop-3.5.0/jars        MapReduce and ResourceManager and NodeManager daemons
#                                   (hadoop-3-pom.xml), as one resolved set
#   $CACHE/hadoop-3.4.2/apps        MapReduce's examples, the distributed shell and the
#                                   YARN service framework (hadoop-3-apps-pom.xml, without
#                                   their dependencies: the jars above have them); Maven
#                                   Central has none of them for 3.5.0
#   $CACHE/flink-1.20.3/lib         Flink's lib directory (flink-dist with its YARN
#                                   deployment, log4j) from PyPI's apache-flink-libraries
#                                   1.20.3: Maven Central serves no flink-dist
#   $CACHE/tez-0.10.4/lib           Apache Tez as its full tarball holds it: its jars,
#                                   the examples, their dependencies and Hadoop 3.3.6's
#                                   client jars (tez-pom.xml)
#
# Maven checks every artifact's checksum (-C fails on a mismatch); pip checks each
# download against the sha256 pinned here. A finished directory has a .complete stamp,
# so a second run does nothing (two runs at once would race: .ci/run makes one). CACHE is $BOBBIN_PEERS_CACHE, else ~/.cache/bobbin-peers;
# the tests look there and skip, saying so, when a peer is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CACHE=${BOBBIN_PEERS_CACHE:-${HOME:?set HOME or BOBBIN_PEERS_CACHE}/.cache/bobbin-peers}
mkdir -p "$CACHE/pypi"
pyspark35_sha=6effc9ce98edf231f4d683fd14f7270629bf8458c628d6a2620ded4bb34f3cb9
pyspark4_sha=bcbd5e18690cf79d438e97210ad06fb8d451a251bb77becc2b0418868d2acd73
flink_libraries_sha=f07f07a46bb272c1e851379ed92105928367019db31240091a5367fc92800289

# A finished directory's .complete holds the hash of what it was fetched from: the words
# given (its pinned versions and hashes, the text of the function that fetches it) and the
# poms among them. An edited pom or fetch fetches that peer again.
stamp() {
  local w
  for w in "$@"; do
    printf '%s\n' "$w"
    case $w in *.xml) cat "$here/$w" ;; esac
  done | sha256sum | cut -d' ' -f1
}
complete() { [ "$(cat "$1/.complete" 2>/dev/null)" = "$2" ]; } # DIR STAMP
done_with() { echo "$2" > "$1/.complete"; }

# pypi_sdist NAME VERSION SHA256: the source archive in $CACHE/pypi, its hash checked.
pypi_sdist() {
  local name=$1 version=$2 sha=$3 file="$CACHE/pypi/$1-$2.tar.gz"
  if [ ! -f "$file" ] || ! echo "$sha  $file" | sha256sum -c --quiet - 2>/dev/null; then
    rm -f "$file"
    echo "$name==$version --hash=sha256:$sha" > "$CACHE/pypi/$name-$version.req"
    python3 -m pip download --quiet --no-deps --no-binary :all: --require-hashes -r "$CACHE/pypi/$name-$version.req" -d "$CACHE/pypi"
  fi
  echo "$sha  $file" | sha256sum -c --quiet -
}

mvn_copy() { # POM SCOPE OUT [MAVEN ARGS...]
  mvn -q -B -C -Dmaven.repo.local="$CACHE/m2" -f "$1" org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
    -DincludeScope="$2" -DoutputDirectory="$3" "${@:4}"
}

spark35() {
  local dir="$CACHE/spark-3.5.5" st
  st=$(stamp spark-3.5-pom.xml spark-3.5-shuffle-pom.xml "$pyspark35_sha" "$(declare -f spark35 mvn_copy pypi_sdist)")
  complete "$dir" "$st" && return
  rm -rf "$dir"
  mkdir -p "$dir/python/lib"
  mvn_copy "$here/spark-3.5-pom.xml" runtime "$dir/jars"
  mvn_copy "$here/spark-3.5-shuffle-pom.xml" runtime "$dir/yarn-shuffle"
  pypi_sdist pyspark 3.5.5 "$pyspark35_sha"
  tar xzf "$CACHE/pypi/pyspark-3.5.5.tar.gz" -C "$dir/python/lib" --strip-components=2 \
    pyspark-3.5.5/lib/pyspark.zip pyspark-3.5.5/lib/py4j-0.10.9.7-src.zip
  done_with "$dir" "$st"
}

spark4() {
  local dir="$CACHE/spark-4.1.4" st
  st=$(stamp "$pyspark4_sha" "$(declare -f spark4 pypi_sdist)")
  complete "$dir" "$st" && return
  rm -rf "$dir"
  mkdir -p "$dir/python/lib"
  pypi_sdist pyspark 4.1.4 "$pyspark4_sha"
  tar xzf "$CACHE/pypi/pyspark-4.1.4.tar.gz" -C "$dir" --strip-components=2 pyspark-4.1.4/deps
  tar xzf "$CACHE/pypi/pyspark-4.1.4.tar.gz" -C "$dir/python/lib" --strip-components=2 pyspark-4.1.4/lib
  done_with "$dir" "$st"
}

hadoop3x() { # VERSION [APPS]: the apps too when APPS is set
  local dir="$CACHE/hadoop-$1" st
  st=$(stamp hadoop-3-pom.xml "$1" "$(declare -f hadoop3x mvn_copy)" ${2:+hadoop-3-apps-pom.xml})
  complete "$dir" "$st" && return
  rm -rf "$dir"
  mvn_copy "$here/hadoop-3-pom.xml" runtime "$dir/jars" -Dhadoop.version="$1"
  if [ -n "${2:-}" ]; then
    mvn_copy "$here/hadoop-3-apps-pom.xml" runtime "$dir/apps" -Dhadoop.version="$1" -DexcludeTransitive=true
  fi
  done_with "$dir" "$st"
}

tez() {
  local dir="$CACHE/tez-0.10.4" st
  st=$(stamp tez-pom.xml "$(declare -f tez mvn_copy)")
  complete "$dir" "$st" && return
  rm -rf "$dir"
  mvn_copy "$here/tez-pom.xml" runtime "$dir/lib"
  done_with "$dir" "$st"
}

flink() {
  local dir="$CACHE/flink-1.20.3" st
  st=$(stamp "$flink_libraries_sha" "$(declare -f flink pypi_sdist)")
  complete "$dir" "$st" && return
  rm -rf "$dir"
  mkdir -p "$dir"
  pypi_sdist apache-flink-libraries 1.20.3 "$flink_libraries_sha"
  tar xzf "$CACHE/pypi/apache-flink-libraries-1.20.3.tar.gz" -C "$dir" --strip-components=2 apache-flink-libraries-1.20.3/deps/lib
  done_with "$dir" "$st"
}

start=$(date +%s)
spark35
spark4
hadoop3x 3.4.2 apps
hadoop3x 3.5.0
tez
flink
echo "peers in $CACHE ($(du -sh "$CACHE" | cut -f1), $(( $(date +%s) - start )) s)"
