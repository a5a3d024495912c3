// Package rmcore is what the ResourceManager's protocol services share: the state (from
// rmstate), the scheduling engine, the token keys and the settings, with the operations
// that move applications, attempts, nodes and containers through their lives —
// admission to the engine, the scheduling loop that commits the engine's plans, the AM
// launcher (over client/nmclient), node status and decommissioning, key rolling, and the
// monitor that expires nodes, attempts, allocations and lifetimes (Step runs one pass on
// a given time, for tests and the monitor alike).
//
// rmcore knows nothing of RPC servers or HTTP: rmservice adapts YARN's protocols to it,
// rmweb serves its figures, and the root resourcemanager package wires them together.
package rmcore
