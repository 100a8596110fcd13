package localcluster

var PortBound = portBound
