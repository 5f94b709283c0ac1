package plan

// DefaultMaxBranches bounds the branches of one llm.parallel unless the
// script raises it: a fan-out that big is more likely a loop over the
// wrong table than an agent. A run keeps that many idle connections per
// VU, so that the branches of the next fan-out find theirs open.
const DefaultMaxBranches = 16
