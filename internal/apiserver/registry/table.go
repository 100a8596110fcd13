package registry

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// RowFunc returns the cells of one object's row, after the NAME column.
type RowFunc func(obj runtime.Object) ([]interface{}, error)

// TableConvertor prints objects as a table (kubectl get): a NAME column, the given
// columns, and AGE last unless the columns hold it.
type TableConvertor struct {
	Columns []metav1.TableColumnDefinition
	Row     RowFunc
}

// NameColumn is the first column of every table.
var NameColumn = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: "Name of the object."}

// AgeColumn is the usual AGE column.
var AgeColumn = metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: "Time since the object was created."}

// ConvertToTable implements rest.TableConvertor.
func (c TableConvertor) ConvertToTable(_ context.Context, object runtime.Object, _ runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{ColumnDefinitions: append([]metav1.TableColumnDefinition{NameColumn}, c.Columns...)}
	addRow := func(obj runtime.Object) error {
		m, err := meta.Accessor(obj)
		if err != nil {
			return fmt.Errorf("reading metadata for a table row: %w", err)
		}
		cells, err := c.Row(obj)
		if err != nil {
			return err
		}
		table.Rows = append(table.Rows, metav1.TableRow{
			Cells:  append([]interface{}{m.GetName()}, cells...),
			Object: runtime.RawExtension{Object: obj},
		})
		return nil
	}
	if meta.IsListType(object) {
		if err := meta.EachListItem(object, addRow); err != nil {
			return nil, err
		}
		if l, err := meta.ListAccessor(object); err == nil {
			table.ResourceVersion = l.GetResourceVersion()
			table.Continue = l.GetContinue()
			table.RemainingItemCount = l.GetRemainingItemCount()
		}
	} else {
		if err := addRow(object); err != nil {
			return nil, err
		}
		if m, err := meta.Accessor(object); err == nil {
			table.ResourceVersion = m.GetResourceVersion()
		}
	}
	return table, nil
}

// Age formats the time since ts as kubectl does (5m, 3h2m, 10d).
func Age(ts metav1.Time) string {
	if ts.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(ts.Time))
}

// ReadyCell is the READY cell of a kind with a Ready condition: True, or the reason
// of a Ready condition that is not True (its status when it has no reason); "" when
// there is none.
func ReadyCell(conditions []metav1.Condition) string {
	c := meta.FindStatusCondition(conditions, "Ready")
	switch {
	case c == nil:
		return ""
	case c.Status != metav1.ConditionTrue && c.Reason != "":
		return c.Reason
	}
	return string(c.Status)
}
