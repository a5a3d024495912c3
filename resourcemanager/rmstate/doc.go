// Package rmstate holds the ResourceManager's state: applications and their attempts
// (Apps), NodeManagers (Nodes), containers (Containers), node labels (Labels) and the
// include/exclude host lists (HostLists). It is what a state store will persist and what
// the REST API reads; the RPC services and the scheduling loop change it only through
// these types' methods.
//
// Locks. Each type owns one mutex, unexported, and takes it only inside its own methods;
// nothing outside the type touches it (integration.TestStateOwnersKeepTheirLocks checks
// the whole module). An attempt's own lock (Apps.Serialize, held through an allocate call
// or the attempt's failure) comes before all of them. Then: Apps — the closures its With, Each and
// WithAttempt run under its lock may call the scheduling engine, Nodes, Containers and
// Labels — then any one of those. Nodes, Containers, Labels and the engine never call
// out while holding their own lock, so they never nest with one another. Apps' second
// mutex, batchMu (the write batch of a recovery), is taken after its first or alone.
package rmstate
