package localcluster

var PortBound = portBound

var (
	EnsureNode    = ensureNode
	SimulatedNode = simulatedNode
)

var ValidateEtcd = validateEtcd

var ParseAudit = parseAudit
