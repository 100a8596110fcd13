package localcluster

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The audit log of Options.AuditWrites: kube-apiserver's log backend, in JSON lines,
// written as each request completes (the backend's default blocking mode: an event
// is in the file when the answer is sent), of write requests only, at level
// Metadata (user, user agent, verb, object, response code; no bodies).

// auditPolicy logs the writes at level Metadata once their answer is sent, and
// nothing else.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: None
`

// auditPolicyFile is the policy's file in a cluster's folder; the log is
// auditLogFile in its log folder.
const (
	auditPolicyFile = "audit-policy.yaml"
	auditLogFile    = "audit.log"
)

// writeAuditPolicy writes the policy into dir and returns the log's path in logDir.
func writeAuditPolicy(dir, logDir string) (string, error) {
	if err := os.WriteFile(filepath.Join(dir, auditPolicyFile), []byte(auditPolicy), 0o644); err != nil {
		return "", fmt.Errorf("write the audit policy: %w", err)
	}
	return filepath.Join(logDir, auditLogFile), nil
}

// auditFlags are kube-apiserver's flags for the audit log at path (none when path
// is ""): no rotation, as a harness reads the one file.
func auditFlags(dir, path string) []string {
	if path == "" {
		return nil
	}
	return []string{
		"--audit-policy-file=" + filepath.Join(dir, auditPolicyFile),
		"--audit-log-path=" + path,
		"--audit-log-format=json",
		"--audit-log-maxsize=0",
		"--audit-log-maxbackup=0",
	}
}

// AuditLog is the path of kube-apiserver's audit log; "" without Options.AuditWrites.
func (c *Cluster) AuditLog() string { return c.auditLog }

// AuditEvent is what the audit log says of one write.
type AuditEvent struct {
	Verb      string
	UserAgent string
	User      string
	// Resource, Subresource, Namespace and Name say what was written.
	Resource, Subresource, Namespace, Name string
	// DryRun: the request was a dry run (it stored nothing).
	DryRun bool
	// Code is the answer's HTTP status code.
	Code int
	// At is when the answer was sent (the event's stageTimestamp).
	At time.Time
}

// ReadAudit reads the audit log at path: the writes answered in [from, to).
func ReadAudit(path string, from, to time.Time) ([]AuditEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read the audit log: %w", err)
	}
	defer f.Close()
	return parseAudit(f, from, to)
}

// parseAudit reads audit events (JSON lines) from r: the writes answered in
// [from, to). A last line cut short (being written) is skipped.
func parseAudit(r io.Reader, from, to time.Time) ([]AuditEvent, error) {
	var out []AuditEvent
	rd := bufio.NewReader(r)
	for {
		line, err := rd.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return out, nil // a line without its newline is being written
		}
		if err != nil {
			return nil, fmt.Errorf("read the audit log: %w", err)
		}
		var e struct {
			Verb       string `json:"verb"`
			UserAgent  string `json:"userAgent"`
			RequestURI string `json:"requestURI"`
			User       struct {
				Username string `json:"username"`
			} `json:"user"`
			ObjectRef *struct {
				Resource    string `json:"resource"`
				Subresource string `json:"subresource"`
				Namespace   string `json:"namespace"`
				Name        string `json:"name"`
			} `json:"objectRef"`
			ResponseStatus *struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
			StageTimestamp time.Time `json:"stageTimestamp"`
		}
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("read the audit log: %w", err)
		}
		if e.StageTimestamp.Before(from) || !e.StageTimestamp.Before(to) {
			continue
		}
		ev := AuditEvent{Verb: e.Verb, UserAgent: e.UserAgent, User: e.User.Username, At: e.StageTimestamp,
			DryRun: strings.Contains(e.RequestURI, "dryRun=")}
		if e.ObjectRef != nil {
			ev.Resource, ev.Subresource, ev.Namespace, ev.Name = e.ObjectRef.Resource, e.ObjectRef.Subresource, e.ObjectRef.Namespace, e.ObjectRef.Name
		}
		if e.ResponseStatus != nil {
			ev.Code = e.ResponseStatus.Code
		}
		out = append(out, ev)
	}
}
