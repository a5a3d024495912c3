package conf

// Default is one built-in property: a key Bobbin reads, YARN's default value for it, and
// what it does. docs/configuration.md lists every entry (a test keeps the two in step).
type Default struct {
	Key, Value, Doc string
	// Bobbin marks keys that are Bobbin's own additions rather than Hadoop's.
	Bobbin bool
}

// Defaults are the values a property has when no site file sets it. They are YARN 2.7.3's
// defaults (yarn-default.xml, core-default.xml) unless marked as Bobbin's own.
var Defaults = []Default{
	// core-site.xml
	{Key: "fs.defaultFS", Value: "file:///", Doc: "Default filesystem; staging and localization paths without a scheme resolve against it."},
	{Key: "hadoop.tmp.dir", Value: "/tmp/hadoop-${user.name}", Doc: "Base for other temporary directories."},
	{Key: "hadoop.security.authentication", Value: "simple", Doc: "simple is the only mode Bobbin serves; tokens (DIGEST-MD5) are always accepted where YARN uses them."},
	{Key: "ipc.maximum.data.length", Value: "67108864", Doc: "Largest IPC request packet a server accepts, in bytes."},
	{Key: "ipc.client.connect.max.retries", Value: "10", Doc: "Connect retries of Bobbin's IPC client (NM to RM, RM to NM)."},
	{Key: "ipc.client.connect.retry.interval", Value: "1000", Doc: "Milliseconds between IPC client connect retries."},
	{Key: "ipc.client.connect.timeout", Value: "20000", Doc: "IPC client connect timeout in milliseconds."},

	// yarn-site.xml: ResourceManager addresses
	{Key: "yarn.resourcemanager.hostname", Value: "0.0.0.0", Doc: "Host the RM addresses below default to."},
	{Key: "yarn.resourcemanager.bind-host", Value: "", Doc: "When set, the RM's servers bind this host instead of the host part of their addresses."},
	{Key: "yarn.resourcemanager.address", Value: "${yarn.resourcemanager.hostname}:8032", Doc: "ApplicationClientProtocol: job clients, the yarn CLI, spark-submit."},
	{Key: "yarn.resourcemanager.scheduler.address", Value: "${yarn.resourcemanager.hostname}:8030", Doc: "ApplicationMasterProtocol: application masters (AMRMToken required)."},
	{Key: "yarn.resourcemanager.resource-tracker.address", Value: "${yarn.resourcemanager.hostname}:8031", Doc: "ResourceTracker: NodeManager registration and heartbeats."},
	{Key: "yarn.resourcemanager.admin.address", Value: "${yarn.resourcemanager.hostname}:8033", Doc: "ResourceManagerAdministrationProtocol: yarn rmadmin."},
	{Key: "yarn.resourcemanager.webapp.address", Value: "${yarn.resourcemanager.hostname}:8088", Doc: "RM web UI and REST address."},
	{Key: "yarn.web-proxy.address", Value: "", Doc: "The web proxy behind tracking URLs (/proxy/<application id>/). Empty: the RM serves it on its web address. Set: tracking URLs name this host:port, the RM does not serve /proxy, and `bobbin webproxy` runs it."},
	{Key: "yarn.resourcemanager.proxy.timeout.enabled", Value: "true", Doc: "Whether the web proxy bounds its connections to AM web servers by yarn.resourcemanager.proxy.connection.timeout."},
	{Key: "yarn.resourcemanager.proxy.connection.timeout", Value: "60000", Doc: "Milliseconds the web proxy waits to connect to an AM's web server, and for each read from it."},
	{Key: "yarn.http.policy", Value: "HTTP_ONLY", Doc: "Bobbin's web ports serve HTTP only: HTTPS_ONLY and HTTP_AND_HTTPS are refused at start."},
	{Key: "yarn.resourcemanager.application-https.policy", Value: "NONE", Doc: "Hadoop 3.x AM HTTPS through the proxy: only NONE is served; LENIENT and STRICT are refused at start."},

	// yarn-site.xml: ResourceManager service sizes
	{Key: "yarn.resourcemanager.client.thread-count", Value: "50", Doc: "Calls the client service runs at once."},
	{Key: "yarn.resourcemanager.scheduler.client.thread-count", Value: "50", Doc: "Calls the AM service runs at once."},
	{Key: "yarn.resourcemanager.resource-tracker.client.thread-count", Value: "50", Doc: "Calls the resource tracker runs at once."},
	{Key: "yarn.resourcemanager.admin.client.thread-count", Value: "1", Doc: "Calls the admin service runs at once."},
	{Key: "yarn.resourcemanager.am.max-attempts", Value: "2", Doc: "Upper bound and default for an application's AM attempts."},
	{Key: "yarn.resourcemanager.max-completed-applications", Value: "10000", Doc: "Finished applications the RM keeps for reports."},
	{Key: "yarn.resourcemanager.scheduler.class", Value: "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler", Doc: "Read for compatibility; Bobbin always runs its group scheduler over capacity-scheduler.xml."},

	// yarn-site.xml: NodeManager tracking
	{Key: "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms", Value: "1000", Doc: "Heartbeat interval the RM asks NodeManagers to keep (nextHeartBeatInterval)."},
	{Key: "yarn.nm.liveness-monitor.expiry-interval-ms", Value: "600000", Doc: "A NodeManager silent this long is LOST and its containers are completed."},
	{Key: "yarn.resourcemanager.nodemanager.minimum.version", Value: "NONE", Doc: "Read for compatibility; Bobbin accepts NodeManagers of any version."},
	{Key: "yarn.resourcemanager.nodes.include-path", Value: "", Doc: "File of host names allowed to register (one per line or space-separated, # comments); empty: all. Re-read by refreshNodes."},
	{Key: "yarn.resourcemanager.nodes.exclude-path", Value: "", Doc: "File of host names refused or decommissioned. Re-read by refreshNodes."},
	{Key: "yarn.resourcemanager.decommissioning-nodes-watcher.poll-interval-secs", Value: "20", Doc: "How often gracefully decommissioning nodes are checked for completion."},
	{Key: "yarn.node-labels.enabled", Value: "false", Doc: "When false, node-label administration (rmadmin -addToClusterNodeLabels etc.) is refused."},

	{Key: "bobbin.resourcemanager.gc-percent", Value: "100", Doc: "Bobbin addition: the RM's Go GC target (GOGC): the heap may grow to live × (1 + this/100) between collections. Lower trades CPU and latency for memory (see docs/benchmarks.md); a GOGC environment variable overrides it."},
	{Key: "bobbin.resourcemanager.connection-keeper.enabled", Value: "true", Doc: "Bobbin addition: with recovery on and HA off, a small process (`bobbin connection-keeper`) holds the RM's listeners and its clients' connections while the RM is down, so a restarted RM answers AMs, NodeManagers and clients on the connections they had: they see a slower answer instead of a broken connection and Hadoop's 30 s retry sleep (yarn.resourcemanager.connect.retry-interval.ms). Needs fixed (non-zero) ports. See docs/recovery.md."},
	{Key: "bobbin.resourcemanager.connection-keeper.linger-ms", Value: "60000", Doc: "Bobbin addition: how long the connection keeper waits for a killed RM to come back before it closes what it holds (its clients then retry as without it)."},
	{Key: "bobbin.resourcemanager.webapp.pprof.enabled", Value: "false", Doc: "Bobbin addition: serve Go's profiler (/debug/pprof/) on the RM's web address, for profiling under load."},

	// yarn-site.xml: application masters and containers
	{Key: "yarn.am.liveness-monitor.expiry-interval-ms", Value: "600000", Doc: "An AM attempt with no allocate for this long expires; the attempt fails and counts toward max-attempts."},
	{Key: "yarn.resourcemanager.rm.container-allocation.expiry-interval-ms", Value: "600000", Doc: "A container handed to an AM and not started on its NodeManager within this time is taken back (exit status ABORTED)."},

	// yarn-site.xml: secret-key rolling (activation waits 1.5 x the matching liveness interval)
	{Key: "yarn.resourcemanager.am-rm-tokens.master-key-rolling-interval-secs", Value: "86400", Doc: "How often the AMRMToken master key rolls; AMs get new tokens in AllocateResponse.am_rm_token."},
	{Key: "yarn.resourcemanager.container-tokens.master-key-rolling-interval-secs", Value: "86400", Doc: "How often the container-token master key rolls; NodeManagers get it in heartbeats."},
	{Key: "yarn.resourcemanager.nm-tokens.master-key-rolling-interval-secs", Value: "86400", Doc: "How often the NMToken master key rolls; NodeManagers get it in heartbeats."},

	// yarn-site.xml: scheduler limits
	{Key: "yarn.scheduler.minimum-allocation-mb", Value: "1024", Doc: "Smallest container memory; requests are rounded up to a multiple of it."},
	{Key: "yarn.scheduler.maximum-allocation-mb", Value: "8192", Doc: "Largest container memory; also GetNewApplicationResponse.maximumCapability."},
	{Key: "yarn.scheduler.minimum-allocation-vcores", Value: "1", Doc: "Smallest container vcores."},
	{Key: "yarn.scheduler.maximum-allocation-vcores", Value: "32", Doc: "Largest container vcores."},
	{Key: "yarn.nodemanager.resource-plugins", Value: "", Doc: "Hadoop 3.1 device plugins (yarn.io/gpu discovery and isolation). Not supported by Bobbin's NodeManager, which refuses to start when it is set: offer GPUs as a count with `yarn.nodemanager.resource-type.yarn.io/gpu` (yarn-site.xml or node-resources.xml); they are scheduled and reported but not isolated."},
	{Key: "yarn.cluster.max-application-priority", Value: "0", Doc: "Highest application priority (Hadoop 2.8+/3.x): a submission or `yarn application -updatePriority` above it gets this priority, as in the Capacity Scheduler."},
	{Key: "yarn.resource-types", Value: "", Doc: "Hadoop 3.1 resource types beyond memory-mb and vcores (e.g. `yarn.io/gpu`), usually in resource-types.xml; with `yarn.resource-types.<name>.units`, `.minimum-allocation`, `.maximum-allocation`. Bobbin schedules up to two extra types."},
	{Key: "yarn.resourcemanager.resource-profiles.enabled", Value: "false", Doc: "Hadoop 3.1 resource profiles. Bobbin answers the profile calls as 3.1.1 does with them off, and refuses to start when this is true."},
	{Key: "yarn.resourcemanager.reservation-system.enable", Value: "false", Doc: "The reservation system. Bobbin answers reservation calls as Hadoop does with it off, and refuses to start when this is true."},
	{Key: "yarn.resourcemanager.recovery.enabled", Value: "false", Doc: "Keep applications and attempts in the state store and recover them when the RM restarts."},
	{Key: "yarn.resourcemanager.store.class", Value: "org.apache.hadoop.yarn.server.resourcemanager.recovery.FileSystemRMStateStore", Doc: "The state store. FileSystemRMStateStore (with a file:// or local path URI) and LeveldbRMStateStore map to Bobbin's embedded store on local disk; NullRMStateStore keeps nothing; other classes (ZKRMStateStore for now) refuse to start."},
	{Key: "yarn.resourcemanager.fs.state-store.uri", Value: "${hadoop.tmp.dir}/yarn/system/rmstore", Doc: "Directory of the embedded store for FileSystemRMStateStore (file:// or a local path)."},
	{Key: "yarn.resourcemanager.leveldb-state-store.path", Value: "${hadoop.tmp.dir}/yarn/system/rmstore", Doc: "Directory of the embedded store for LeveldbRMStateStore."},
	{Key: "yarn.resourcemanager.work-preserving-recovery.enabled", Value: "true", Doc: "After a restart, keep running containers and attempts (true: NodeManagers re-register with their containers, AMs re-register and resend their asks) or fail and retry the running attempts (false)."},
	{Key: "yarn.resourcemanager.work-preserving-recovery.scheduling-wait-ms", Value: "10000", Doc: "After a work-preserving restart, how long the RM waits at most for the NodeManagers that were running to register again before it allocates; Bobbin starts as soon as all of them are back."},
	{Key: "yarn.resourcemanager.ha.enabled", Value: "false", Doc: "ResourceManager high availability: RMs named by ha.rm-ids share a ZooKeeper state store; one is active, the others standby (docs/recovery.md)."},
	{Key: "yarn.resourcemanager.ha.rm-ids", Value: "", Doc: "The RMs' ids (rm1,rm2); each has its addresses as yarn.resourcemanager.address.<id> etc. or yarn.resourcemanager.hostname.<id>."},
	{Key: "yarn.resourcemanager.ha.id", Value: "", Doc: "This RM's id; unset, the id whose address is on this machine."},
	{Key: "yarn.resourcemanager.ha.automatic-failover.enabled", Value: "true", Doc: "Elect the active RM in ZooKeeper (true) or leave it to yarn rmadmin -transitionToActive (false)."},
	{Key: "yarn.resourcemanager.ha.automatic-failover.zk-base-path", Value: "/yarn-leader-election", Doc: "Where the election lock lives: <zk-base-path>/<cluster-id>/ActiveStandbyElectorLock."},
	{Key: "yarn.resourcemanager.cluster-id", Value: "", Doc: "The cluster's name, under which its RMs elect the active one (needed with automatic failover)."},
	{Key: "yarn.resourcemanager.zk-state-store.parent-path", Value: "/rmstore", Doc: "Where ZKRMStateStore keeps the RM's state in ZooKeeper (Bobbin: under <parent-path>/BobbinRMStateRoot)."},
	{Key: "yarn.resourcemanager.zk-address", Value: "", Doc: "ZooKeeper quorum (host:port,...) for ZKRMStateStore (Hadoop 2.x key; hadoop.zk.address is 3.x's and is read first)."},
	{Key: "hadoop.zk.address", Value: "", Doc: "ZooKeeper quorum (host:port,...) for ZKRMStateStore (Hadoop 3.x key)."},
	{Key: "yarn.resourcemanager.zk-timeout-ms", Value: "10000", Doc: "ZooKeeper session timeout of the RM's state store."},
	{Key: "yarn.resourcemanager.state-store.max-completed-applications", Value: "${yarn.resourcemanager.max-completed-applications}", Doc: "Completed applications kept in the state store."},

	// yarn-site.xml: NodeManager
	{Key: "yarn.nodemanager.hostname", Value: "0.0.0.0", Doc: "NodeManager host; 0.0.0.0 means the machine's host name is reported in the NodeId."},
	{Key: "yarn.nodemanager.bind-host", Value: "", Doc: "When set, the host the NodeManager's servers bind instead of the address's host."},
	{Key: "yarn.nodemanager.address", Value: "${yarn.nodemanager.hostname}:0", Doc: "ContainerManagementProtocol address; port 0 picks a free port (the NodeId port)."},
	{Key: "yarn.nodemanager.webapp.address", Value: "${yarn.nodemanager.hostname}:8042", Doc: "NodeManager HTTP address (container logs); its port is the node's HTTP port."},
	{Key: "yarn.nodemanager.local-dirs", Value: "${hadoop.tmp.dir}/nm-local-dir", Doc: "Comma list of directories for caches and container work dirs."},
	{Key: "yarn.nodemanager.log-dirs", Value: "${hadoop.tmp.dir}/userlogs", Doc: "Comma list of directories for container logs (<dir>/<app>/<container>)."},
	{Key: "yarn.nodemanager.resource.memory-mb", Value: "8192", Doc: "Memory the NodeManager offers to containers."},
	{Key: "yarn.nodemanager.resource.cpu-vcores", Value: "8", Doc: "Virtual cores the NodeManager offers to containers."},
	{Key: "yarn.nodemanager.container-manager.thread-count", Value: "20", Doc: "Calls the container manager runs at once."},
	{Key: "yarn.nodemanager.aux-services", Value: "", Doc: "Comma list of auxiliary services; mapreduce_shuffle is built in."},
	{Key: "yarn.nodemanager.aux-services.mapreduce_shuffle.class", Value: "org.apache.hadoop.mapred.ShuffleHandler", Doc: "Read for compatibility; Bobbin's shuffle is built in."},
	{Key: "mapreduce.shuffle.port", Value: "13562", Doc: "Port of the mapreduce_shuffle service (0 picks a free port)."},
	{Key: "yarn.nodemanager.env-whitelist", Value: "JAVA_HOME,HADOOP_COMMON_HOME,HADOOP_HDFS_HOME,HADOOP_CONF_DIR,HADOOP_YARN_HOME", Doc: "Variables copied from the NodeManager's environment when the launch context does not set them."},
	{Key: "yarn.nodemanager.admin-env", Value: "MALLOC_ARENA_MAX=$MALLOC_ARENA_MAX", Doc: "Variables forced into every container's environment."},
	{Key: "yarn.nodemanager.sleep-delay-before-sigkill.ms", Value: "250", Doc: "Time between SIGTERM and SIGKILL when a container is stopped."},
	{Key: "yarn.nodemanager.pmem-check-enabled", Value: "true", Doc: "Kill containers whose processes' resident memory exceeds their allocation (exit -104)."},
	{Key: "yarn.nodemanager.vmem-check-enabled", Value: "true", Doc: "Kill containers whose virtual memory exceeds vmem-pmem-ratio times their allocation (exit -103)."},
	{Key: "yarn.nodemanager.vmem-pmem-ratio", Value: "2.1", Doc: "Virtual memory allowed per unit of allocated memory."},
	{Key: "yarn.nodemanager.container-monitor.interval-ms", Value: "3000", Doc: "How often container memory is measured."},
	{Key: "yarn.nodemanager.disk-health-checker.interval-ms", Value: "120000", Doc: "How often local and log dirs are checked."},
	{Key: "yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage", Value: "90.0", Doc: "A dir on a disk fuller than this is bad."},
	{Key: "yarn.nodemanager.disk-health-checker.min-free-space-per-disk-mb", Value: "0", Doc: "A dir on a disk with less free space than this is bad."},
	{Key: "yarn.nodemanager.log.retain-seconds", Value: "10800", Doc: "How long a finished application's container logs are kept (no log aggregation)."},
	{Key: "yarn.nodemanager.localizer.cache.target-size-mb", Value: "10240", Doc: "Size the PUBLIC and PRIVATE caches are trimmed to (unused entries, oldest first)."},
	{Key: "yarn.nodemanager.localizer.cache.cleanup.interval-ms", Value: "600000", Doc: "How often the caches are trimmed."},
	{Key: "yarn.nodemanager.user-home-dir", Value: "/home/", Doc: "HOME of container processes."},
	{Key: "yarn.nodemanager.delete.debug-delay-sec", Value: "0", Doc: "How long a finished application's work dirs are kept before deletion."},
	{Key: "bobbin.nodemanager.container-executor", Value: "process", Bobbin: true, Doc: "Bobbin addition: how containers run: process (a process tree, as DefaultContainerExecutor) or uml (each container in its own User-Mode Linux guest, no root needed)."},
	{Key: "bobbin.nodemanager.uml.kernel", Value: "linux.uml", Bobbin: true, Doc: "Bobbin addition: the UML kernel binary (Debian package user-mode-linux)."},
	{Key: "bobbin.nodemanager.uml.mconsole", Value: "uml_mconsole", Bobbin: true, Doc: "Bobbin addition: uml_mconsole (package uml-utilities), used to halt a guest when its container is stopped."},
	{Key: "bobbin.nodemanager.uml.slirp", Value: "/usr/bin/slirp-fullbolt", Bobbin: true, Doc: "Bobbin addition: the slirp binary behind the guest's eth0 (plain slirp starts but its connections time out); empty gives guests no network."},
	{Key: "bobbin.nodemanager.uml.root-dir", Value: "", Bobbin: true, Doc: "Bobbin addition: confined mode: this prepared directory is the guest's root (hostfs=<dir>), nothing outside it is reachable; the NodeManager's local and log dirs must lie inside it. Empty: the host's root, read-only."},
	{Key: "bobbin.nodemanager.uml.state-dir", Value: "", Bobbin: true, Doc: "Bobbin addition: where the start lock, guest address slots and umid dirs live; empty: uml/ in the first local dir."},
	{Key: "bobbin.nodemanager.uml.tmp-dir", Value: "/dev/shm", Bobbin: true, Doc: "Bobbin addition: TMPDIR of the UML kernel, where each guest's RAM file is created; it must allow exec and hold the guests' memory."},
	{Key: "bobbin.nodemanager.uml.memory-overhead-mb", Value: "64", Bobbin: true, Doc: "Bobbin addition: guest memory (mem=) is the container's memory plus this, for the guest kernel."},
	{Key: "bobbin.nodemanager.uml.host-loopback", Value: "true", Bobbin: true, Doc: "Bobbin addition: route the guest's 127.0.0.0/8 to the host's loopback through slirp, so localhost addresses in a job's configuration mean the host's services."},
	{Key: "bobbin.nodemanager.uml.boot-timeout-ms", Value: "60000", Bobbin: true, Doc: "Bobbin addition: longest a guest start holds the node's start lock."},
	{Key: "bobbin.nodemanager.uml.extra-rw-dirs", Value: "", Bobbin: true, Doc: "Bobbin addition: more host directories every guest mounts read-write (e.g. a shared file system that file:// jobs write output to)."},
	{Key: "bobbin.nodemanager.borrowed.enabled", Value: "false", Bobbin: true, Doc: "Bobbin addition: borrowed mode: capacity is measured from the owner's load on every heartbeat, containers are evicted (PREEMPTED) when the owner needs the machine."},
	{Key: "bobbin.nodemanager.borrowed.interval-ms", Value: "1000", Bobbin: true, Doc: "Bobbin addition: how often the host and the containers are measured."},
	{Key: "bobbin.nodemanager.borrowed.window-ms", Value: "5000", Bobbin: true, Doc: "Bobbin addition: the owner's CPU share is averaged over this window; after an eviction the next waits as long."},
	{Key: "bobbin.nodemanager.borrowed.memory-reserve-mb", Value: "1024", Bobbin: true, Doc: "Bobbin addition: memory kept free for the owner on top of what its processes use."},
	{Key: "bobbin.nodemanager.borrowed.leave-below", Value: "0.2", Bobbin: true, Doc: "Bobbin addition: the node leaves the schedulable set when its measured capacity falls below this share of the configured capacity."},
	{Key: "bobbin.nodemanager.borrowed.rejoin-above", Value: "0.4", Bobbin: true, Doc: "Bobbin addition: a node out of the schedulable set rejoins when its measured capacity is back at this share (hysteresis)."},
	{Key: "bobbin.nodemanager.borrowed.disk-min-free-mb", Value: "1024", Bobbin: true, Doc: "Bobbin addition: with less free space than this in the local or log dirs the node takes no new work."},
	{Key: "bobbin.nodemanager.borrowed.critical-hours", Value: "", Bobbin: true, Doc: "Bobbin addition: daily windows (HH:MM-HH:MM, comma-separated; a window may wrap midnight) in which the node offers zero capacity."},
	{Key: "bobbin.nodemanager.borrowed.time-zone", Value: "Local", Bobbin: true, Doc: "Bobbin addition: time zone of the critical hours (an IANA name such as Asia/Shanghai, or Local)."},
	{Key: "bobbin.nodemanager.borrowed.critical-hours-evict", Value: "true", Bobbin: true, Doc: "Bobbin addition: stop (PREEMPTED) the containers still running when critical hours begin."},
	{Key: "bobbin.nodemanager.borrowed.evict-external-cpu", Value: "0.8", Bobbin: true, Doc: "Bobbin addition: when the owner's average CPU share passes this, containers are stopped youngest first until they use at most 1 - owner share - margin; 0 turns it off."},
	{Key: "bobbin.nodemanager.borrowed.evict-margin", Value: "0.1", Bobbin: true, Doc: "Bobbin addition: CPU share kept free for the owner when evicting."},
	{Key: "bobbin.nodemanager.borrowed.evict-min-free-memory-mb", Value: "256", Bobbin: true, Doc: "Bobbin addition: when the host's available memory falls below this, containers are stopped youngest first; 0 turns it off."},
	{Key: "bobbin.nodemanager.borrowed.container-cpu-ratio", Value: "0", Bobbin: true, Doc: "Bobbin addition: a container using more than this many times the CPU its vcores stand for is evicted; 0 turns it off."},
	{Key: "bobbin.nodemanager.borrowed.history-size", Value: "10080", Bobbin: true, Doc: "Bobbin addition: measurements kept for /ws/v1/node/borrowed (external, job and free shares over time)."},
	{Key: "bobbin.nodemanager.auto-labels.enabled", Value: "false", Bobbin: true, Doc: "Bobbin addition: report automatic node labels (high_mem, high_load, static) in heartbeats; a Bobbin RM sends AM containers to static nodes."},
	{Key: "bobbin.nodemanager.auto-labels.high-mem-mb", Value: "65536", Bobbin: true, Doc: "Bobbin addition: physical memory from which a node is labelled high_mem."},
	{Key: "bobbin.nodemanager.auto-labels.high-load-share", Value: "0.5", Bobbin: true, Doc: "Bobbin addition: average external CPU share over the label window from which a node is labelled high_load."},
	{Key: "bobbin.nodemanager.auto-labels.static-max-share", Value: "0.2", Bobbin: true, Doc: "Bobbin addition: a node that is not borrowed and whose external CPU share stays at most this over the label window is labelled static."},
	{Key: "bobbin.nodemanager.auto-labels.window-ms", Value: "60000", Bobbin: true, Doc: "Bobbin addition: the window the high_load and static labels look at."},
	{Key: "bobbin.nodemanager.allow-simple-auth", Value: "false", Doc: "Bobbin addition: accept ContainerManagementProtocol calls without an NMToken (SIMPLE), trusting the caller's claims."},
	{Key: "fs.defaultFS", Value: "file:///", Doc: "Default file system; its host:port is the namenode for hdfs:/// resources."},

	// yarn-site.xml: access control
	{Key: "yarn.acl.enable", Value: "false", Doc: "When false every user may do everything; when true queue and admin ACLs apply."},
	{Key: "yarn.admin.acl", Value: "*", Doc: "Users and groups who administer the cluster (\"users groups\", * for all)."},
}
