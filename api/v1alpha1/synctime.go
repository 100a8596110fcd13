package v1alpha1

import (
	"fmt"
	"time"
)

// SyncTimeLayout is the layout /sync writes: UTC, RFC 3339, to the second.
const SyncTimeLayout = "2006-01-02T15:04:05Z"

// FormatSyncTime formats t as /sync writes it: UTC, RFC 3339, to the second.
func FormatSyncTime(t time.Time) string {
	return t.UTC().Truncate(time.Second).Format(SyncTimeLayout)
}

// ParseSyncTime parses a sync annotation value: any RFC 3339 time (fractions and
// offsets allowed), returned in UTC and truncated to the second, since convoy compares
// sync times to the second.
func ParseSyncTime(value string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, value)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time: %w", value, err)
	}
	return t.UTC().Truncate(time.Second), nil
}
