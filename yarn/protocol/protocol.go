// Package protocol names the YARN RPC protocols as Hadoop IPC carries them: the
// declaringClassProtocolName of every request header and the protocol of a
// connection's IpcConnectionContext. Server and client use the same constants.
package protocol

const (
	// ApplicationClient is ApplicationClientProtocol (yarn.resourcemanager.address, 8032):
	// submitting, listing and killing applications, nodes and queues.
	ApplicationClient = "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB"
	// ApplicationMaster is ApplicationMasterProtocol (yarn.resourcemanager.scheduler.address,
	// 8030): an AM's register, allocate and finish, authenticated by its AMRMToken.
	ApplicationMaster = "org.apache.hadoop.yarn.api.ApplicationMasterProtocolPB"
	// ResourceTracker is the NodeManagers' registration and heartbeats
	// (yarn.resourcemanager.resource-tracker.address, 8031).
	ResourceTracker = "org.apache.hadoop.yarn.server.api.ResourceTrackerPB"
	// ResourceManagerAdministration is `yarn rmadmin` (yarn.resourcemanager.admin.address, 8033).
	ResourceManagerAdministration = "org.apache.hadoop.yarn.server.api.ResourceManagerAdministrationProtocolPB"
	// ContainerManagement is a NodeManager's container start/stop/status
	// (yarn.nodemanager.address), authenticated by NMTokens.
	ContainerManagement = "org.apache.hadoop.yarn.api.ContainerManagementProtocolPB"
)
