// Package rmservice holds the ResourceManager's RPC services as adapters between YARN's
// protobuf messages and rmcore: ApplicationClientProtocol (the client service),
// ApplicationMasterProtocol (the AM service), ResourceTracker (NodeManagers) and
// ResourceManagerAdministrationProtocol (rmadmin). Each checks and converts a request,
// calls rmcore and the rmstate owners, and converts the answer back; errors carry the
// Java exception class a Hadoop client expects.
package rmservice
