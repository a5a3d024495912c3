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
	{Key: "bobbin.nodemanager.allow-simple-auth", Value: "false", Doc: "Bobbin addition: accept ContainerManagementProtocol calls without an NMToken (SIMPLE), trusting the caller's claims."},
	{Key: "fs.defaultFS", Value: "file:///", Doc: "Default file system; its host:port is the namenode for hdfs:/// resources."},

	// yarn-site.xml: access control
	{Key: "yarn.acl.enable", Value: "false", Doc: "When false every user may do everything; when true queue and admin ACLs apply."},
	{Key: "yarn.admin.acl", Value: "*", Doc: "Users and groups who administer the cluster (\"users groups\", * for all)."},
}
