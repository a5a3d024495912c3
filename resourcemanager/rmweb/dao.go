package rmweb

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
)

// The objects below are the Java RM's web DAOs (org.apache.hadoop.yarn.server.
// resourcemanager.webapp.dao) as 3.1.1 renders them, with the keys 3.3+ adds: the same
// names, a superset of 2.7.3's, in 3.1.1's order (3.3+'s keys are placed near theirs,
// not always in Java's order). Where a Java field is null the key is left out, as Jersey
// does.

// resourceInfo is ResourceInfo: memory and vCores, and (3.x) every resource type.
type resourceInfo struct {
	Memory               int64                 `json:"memory"`
	VCores               int64                 `json:"vCores"`
	ResourceInformations *resourceInformations `json:"resourceInformations,omitempty"`
}

type resourceInformations struct {
	ResourceInformation []resourceInformation `json:"resourceInformation"`
}

// resourceInformation's keys are in alphabetical order: Java serialises it from getters.
type resourceInformation struct {
	// Attributes are the type's attributes (3.x; none for the types Bobbin knows).
	Attributes        struct{} `json:"attributes"`
	MaximumAllocation int64    `json:"maximumAllocation"`
	MinimumAllocation int64    `json:"minimumAllocation"`
	Name              string   `json:"name"`
	ResourceType      string   `json:"resourceType"`
	Units             string   `json:"units"`
	Value             int64    `json:"value"`
}

// resource renders an engine vector.
func resource(rm *rmcore.Core, v scheduler.Resource) *resourceInfo {
	ri := &resourceInfo{Memory: v[scheduler.Memory], VCores: v[scheduler.VCores], ResourceInformations: &resourceInformations{}}
	for i, t := range rm.Types().All() {
		var val int64
		if i < len(v) {
			val = v[i]
		}
		ri.ResourceInformations.ResourceInformation = append(ri.ResourceInformations.ResourceInformation, resourceInformation{
			MaximumAllocation: t.Max, MinimumAllocation: t.Min, Name: t.Name, ResourceType: "COUNTABLE", Units: t.Units, Value: val})
	}
	return ri
}

// entryMap is a Java Map as Jersey renders it: one "entry" key per pair (repeated keys),
// values as strings.
type entryMap []mapEntry

type mapEntry struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

func (m entryMap) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"entry":`)
		v, err := json.Marshal(e)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// secondsMap is resourceSecondsMap: resource-seconds by type name.
func secondsMap(names []string, seconds func(name string) int64) entryMap {
	m := make(entryMap, 0, len(names))
	for _, n := range names {
		m = append(m, mapEntry{Key: n, Value: strconv.FormatInt(seconds(n), 10)})
	}
	return m
}

type clusterInfo struct {
	ID                            int64  `json:"id"`
	StartedOn                     int64  `json:"startedOn"`
	State                         string `json:"state"`
	HAState                       string `json:"haState"`
	RMStateStoreName              string `json:"rmStateStoreName"`
	ResourceManagerVersion        string `json:"resourceManagerVersion"`
	ResourceManagerBuildVersion   string `json:"resourceManagerBuildVersion"`
	ResourceManagerVersionBuiltOn string `json:"resourceManagerVersionBuiltOn"`
	HadoopVersion                 string `json:"hadoopVersion"`
	HadoopBuildVersion            string `json:"hadoopBuildVersion"`
	HadoopVersionBuiltOn          string `json:"hadoopVersionBuiltOn"`
	HAZooKeeperConnectionState    string `json:"haZooKeeperConnectionState"`
	// Bobbin's addition: where the state store keeps the state.
	RMStateStoreLocation string `json:"rmStateStoreLocation,omitempty"`
}

type clusterMetricsInfo struct {
	AppsSubmitted                           int64         `json:"appsSubmitted"`
	AppsCompleted                           int64         `json:"appsCompleted"`
	AppsPending                             int64         `json:"appsPending"`
	AppsRunning                             int64         `json:"appsRunning"`
	AppsFailed                              int64         `json:"appsFailed"`
	AppsKilled                              int64         `json:"appsKilled"`
	ReservedMB                              int64         `json:"reservedMB"`
	AvailableMB                             int64         `json:"availableMB"`
	AllocatedMB                             int64         `json:"allocatedMB"`
	PendingMB                               int64         `json:"pendingMB"` // 3.x, as the others below
	ReservedVirtualCores                    int64         `json:"reservedVirtualCores"`
	AvailableVirtualCores                   int64         `json:"availableVirtualCores"`
	AllocatedVirtualCores                   int64         `json:"allocatedVirtualCores"`
	PendingVirtualCores                     int64         `json:"pendingVirtualCores"`
	ContainersAllocated                     int64         `json:"containersAllocated"`
	ContainersReserved                      int64         `json:"containersReserved"`
	ContainersPending                       int64         `json:"containersPending"`
	TotalMB                                 int64         `json:"totalMB"`
	UtilizedMB                              int64         `json:"utilizedMB"`
	TotalVirtualCores                       int64         `json:"totalVirtualCores"`
	UtilizedVirtualCores                    int64         `json:"utilizedVirtualCores"`
	UtilizedMBPercent                       int64         `json:"utilizedMBPercent"`
	UtilizedVirtualCoresPercent             int64         `json:"utilizedVirtualCoresPercent"`
	RMSchedulerBusyPercent                  int64         `json:"rmSchedulerBusyPercent"`
	TotalNodes                              int32         `json:"totalNodes"`
	LostNodes                               int32         `json:"lostNodes"`
	UnhealthyNodes                          int32         `json:"unhealthyNodes"`
	DecommissioningNodes                    int32         `json:"decommissioningNodes"`
	DecommissionedNodes                     int32         `json:"decommissionedNodes"`
	RebootedNodes                           int32         `json:"rebootedNodes"`
	ActiveNodes                             int32         `json:"activeNodes"`
	ShutdownNodes                           int32         `json:"shutdownNodes"`
	ContainerAssignedPerSecond              int64         `json:"containerAssignedPerSecond"`
	TotalUsedResourcesAcrossPartition       *resourceInfo `json:"totalUsedResourcesAcrossPartition"`
	TotalClusterResourcesAcrossPartition    *resourceInfo `json:"totalClusterResourcesAcrossPartition"`
	TotalReservedResourcesAcrossPartition   *resourceInfo `json:"totalReservedResourcesAcrossPartition"`
	TotalAllocatedContainersAcrossPartition int64         `json:"totalAllocatedContainersAcrossPartition"`
	CrossPartitionMetricsAvailable          bool          `json:"crossPartitionMetricsAvailable"`
	// The Java RM's dispatcher queues; Bobbin handles every event in the call that
	// brings it (no dispatcher), so none ever waits in a queue.
	RMEventQueueSize        int64 `json:"rmEventQueueSize"`
	SchedulerEventQueueSize int64 `json:"schedulerEventQueueSize"`
}

type appInfo struct {
	ID                          string        `json:"id"`
	User                        string        `json:"user"`
	Name                        string        `json:"name"`
	Queue                       string        `json:"queue"`
	State                       string        `json:"state"`
	FinalStatus                 string        `json:"finalStatus"`
	Progress                    float64       `json:"progress"`
	TrackingUI                  string        `json:"trackingUI"`
	TrackingURL                 string        `json:"trackingUrl,omitempty"`
	Diagnostics                 string        `json:"diagnostics"`
	ClusterID                   int64         `json:"clusterId"`
	ApplicationType             string        `json:"applicationType"`
	ApplicationTags             string        `json:"applicationTags"`
	Priority                    int32         `json:"priority"`
	StartedTime                 int64         `json:"startedTime"`
	LaunchTime                  int64         `json:"launchTime"` // 3.x: the first AM container's launch
	FinishedTime                int64         `json:"finishedTime"`
	ElapsedTime                 int64         `json:"elapsedTime"`
	AMContainerLogs             string        `json:"amContainerLogs,omitempty"`
	AMHostHTTPAddress           string        `json:"amHostHttpAddress,omitempty"`
	AMRPCAddress                string        `json:"amRPCAddress,omitempty"`
	MasterNodeID                string        `json:"masterNodeId"`
	AllocatedMB                 int64         `json:"allocatedMB"`
	AllocatedVCores             int64         `json:"allocatedVCores"`
	ReservedMB                  int64         `json:"reservedMB"`
	ReservedVCores              int64         `json:"reservedVCores"`
	RunningContainers           int32         `json:"runningContainers"`
	MemorySeconds               int64         `json:"memorySeconds"`
	VcoreSeconds                int64         `json:"vcoreSeconds"`
	QueueUsagePercentage        float64       `json:"queueUsagePercentage"`
	ClusterUsagePercentage      float64       `json:"clusterUsagePercentage"`
	ResourceSecondsMap          entryMap      `json:"resourceSecondsMap"`
	PreemptedResourceMB         int64         `json:"preemptedResourceMB"`
	PreemptedResourceVCores     int64         `json:"preemptedResourceVCores"`
	NumNonAMContainerPreempted  int32         `json:"numNonAMContainerPreempted"`
	NumAMContainerPreempted     int32         `json:"numAMContainerPreempted"`
	PreemptedMemorySeconds      int64         `json:"preemptedMemorySeconds"`
	PreemptedVcoreSeconds       int64         `json:"preemptedVcoreSeconds"`
	PreemptedResourceSecondsMap entryMap      `json:"preemptedResourceSecondsMap"`
	LogAggregationStatus        string        `json:"logAggregationStatus"`
	UnmanagedApplication        bool          `json:"unmanagedApplication"`
	AppNodeLabelExpression      string        `json:"appNodeLabelExpression,omitempty"`
	AMNodeLabelExpression       string        `json:"amNodeLabelExpression,omitempty"`
	ResourceInfo                *appResources `json:"resourceInfo,omitempty"`
	Timeouts                    *appTimeouts  `json:"timeouts,omitempty"`
	// ResourceRequests are what a running application waits for (ResourceRequestInfo):
	// its outstanding asks; left out once it finished, as in the Java RM.
	ResourceRequests *[]resourceRequestInfo `json:"resourceRequests,omitempty"`
}

// resourceRequestInfo is ResourceRequestInfo: one outstanding ask.
type resourceRequestInfo struct {
	Priority             int32                     `json:"priority"`
	AllocationRequestID  int64                     `json:"allocationRequestId"`
	ResourceName         string                    `json:"resourceName,omitempty"`
	Capability           *resourceInfo             `json:"capability"`
	NumContainers        int                       `json:"numContainers"`
	RelaxLocality        bool                      `json:"relaxLocality"`
	NodeLabelExpression  string                    `json:"nodeLabelExpression,omitempty"`
	ExecutionTypeRequest *executionTypeRequestInfo `json:"executionTypeRequest,omitempty"`
	PlacementConstraint  string                    `json:"placementConstraint,omitempty"`
	AllocationTags       []string                  `json:"allocationTags,omitempty"`
}

type executionTypeRequestInfo struct {
	ExecutionType        string `json:"executionType"`
	EnforceExecutionType bool   `json:"enforceExecutionType"`
}

type appResources struct {
	ResourceUsagesByPartition []partitionUsage `json:"resourceUsagesByPartition"`
}

type partitionUsage struct {
	PartitionName string        `json:"partitionName"`
	Used          *resourceInfo `json:"used"`
	Reserved      *resourceInfo `json:"reserved"`
	Pending       *resourceInfo `json:"pending"`
	AMUsed        *resourceInfo `json:"amUsed"`
	AMLimit       *resourceInfo `json:"amLimit"`
	UserAMLimit   *resourceInfo `json:"userAmLimit"`
}

type appTimeouts struct {
	Timeout []appTimeout `json:"timeout"`
}

type appTimeout struct {
	Type                   string `json:"type"`
	ExpiryTime             string `json:"expiryTime"`
	RemainingTimeInSeconds int64  `json:"remainingTimeInSeconds"`
}

type appAttemptInfo struct {
	ID                       int32  `json:"id"`
	StartTime                int64  `json:"startTime"`
	FinishedTime             int64  `json:"finishedTime"`
	ContainerID              string `json:"containerId"`
	NodeHTTPAddress          string `json:"nodeHttpAddress"`
	NodeID                   string `json:"nodeId"`
	LogsLink                 string `json:"logsLink"`
	BlacklistedNodes         string `json:"blacklistedNodes"`
	NodesBlacklistedBySystem string `json:"nodesBlacklistedBySystem"`
	AppAttemptID             string `json:"appAttemptId"`
	// 3.x: the AM container's exposed ports as JSON (Docker's; "null": none, "": no AM
	// container yet) and the attempt's state.
	ExportPorts     string `json:"exportPorts"`
	AppAttemptState string `json:"appAttemptState"`
}

type nodeInfo struct {
	Rack                  string `json:"rack"`
	State                 string `json:"state"`
	ID                    string `json:"id"`
	NodeHostName          string `json:"nodeHostName"`
	NodeHTTPAddress       string `json:"nodeHTTPAddress"`
	LastHealthUpdate      int64  `json:"lastHealthUpdate"`
	Version               string `json:"version"`
	HealthReport          string `json:"healthReport"`
	NumContainers         int32  `json:"numContainers"`
	UsedMemoryMB          int64  `json:"usedMemoryMB"`
	AvailMemoryMB         int64  `json:"availMemoryMB"`
	UsedVirtualCores      int64  `json:"usedVirtualCores"`
	AvailableVirtualCores int64  `json:"availableVirtualCores"`
	// 3.x: the machine's measured use, in percent of its physical memory and cores.
	MemUtilization         float32          `json:"memUtilization"`
	CPUUtilization         float32          `json:"cpuUtilization"`
	NumRunningOpportContrs int32            `json:"numRunningOpportContainers"`
	UsedMemoryOpportGB     int64            `json:"usedMemoryOpportGB"`
	UsedVirtualCoresOpport int32            `json:"usedVirtualCoresOpport"`
	NumQueuedContainers    int32            `json:"numQueuedContainers"`
	NodeLabels             []string         `json:"nodeLabels,omitempty"`
	AllocationTags         allocationTags   `json:"allocationTags"` // 3.x placement constraints' tags (scheduling.md §8)
	ResourceUtilization    *nodeUtilization `json:"resourceUtilization,omitempty"`
	UsedResource           *resourceInfo    `json:"usedResource"`
	AvailableResource      *resourceInfo    `json:"availableResource"`
	// 3.2+: the node's attributes (Bobbin serves none: docs/hadoop3.md) and capacity.
	NodeAttributesInfo struct{}           `json:"nodeAttributesInfo"`
	TotalResource      *resourceInfo      `json:"totalResource"`
	Bobbin             *bobbinNodeDetails `json:"bobbin,omitempty"`
}

// allocationTags are a node's allocation tags and how many of its containers carry each,
// as the Java RM's AllocationTagsInfo (empty: {}).
type allocationTags struct {
	Info []allocationTagInfo `json:"allocationTagInfo,omitempty"`
}

type allocationTagInfo struct {
	Tag   string `json:"allocationTag"`
	Count int64  `json:"allocationsCount"`
}

type nodeUtilization struct {
	NodePhysicalMemoryMB                 int64   `json:"nodePhysicalMemoryMB"`
	NodeVirtualMemoryMB                  int64   `json:"nodeVirtualMemoryMB"`
	NodeCPUUsage                         float64 `json:"nodeCPUUsage"`
	AggregatedContainersPhysicalMemoryMB int64   `json:"aggregatedContainersPhysicalMemoryMB"`
	AggregatedContainersVirtualMemoryMB  int64   `json:"aggregatedContainersVirtualMemoryMB"`
	ContainersCPUUsage                   float64 `json:"containersCPUUsage"`
}

// bobbinNodeDetails is Bobbin's addition to NodeInfo: what a borrowed node reports of
// itself (its measured labels: high_mem, high_load, static).
type bobbinNodeDetails struct {
	AutoLabels []string `json:"autoLabels,omitempty"`
	Static     bool     `json:"static"`
}
