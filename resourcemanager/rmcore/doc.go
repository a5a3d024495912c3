// Package rmcore is what the ResourceManager's protocol services share: the state (from
// rmstate), the scheduling engine, the token keys and the settings, with the operations
// that move applications, attempts, nodes and containers through their lives —
// admission to the engine, the scheduling loop that commits the engine's plans, the AM
// launcher (over client/nmclient), node status and decommissioning, key rolling, and the
// monitor that expires nodes, attempts, allocations and lifetimes (Step runs one pass on
// a given time, for tests and the monitor alike).
//
// It owns the protocols' logic — submitting, an AM's register, allocate and finish, a
// NodeManager's register, heartbeat and unregister — and knows nothing of RPC servers or
// HTTP: its refusals are YARN facts (yarn/exceptions.Error, the Java class a client
// rebuilds), which the IPC server answers as that exception and rmweb as REST's.
// rmservice adapts YARN's protocols to it, rmweb serves its figures, and the root
// resourcemanager package wires them together.
package rmcore
