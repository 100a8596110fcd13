package cli

import (
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
)

// outputFormats are the values of -o besides the default (text for people).
var outputFormats = []string{"yaml", "json"}

// addOutputFlag adds -o yaml|json to a read command.
func addOutputFlag(cmd *cobra.Command, format *string) {
	cmd.Flags().StringVarP(format, "output", "o", "", "output format: "+strings.Join(outputFormats, " or ")+" (default: text for people)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(outputFormats, cobra.ShellCompDirectiveNoFileComp))
}

// checkOutputFormat rejects an -o value other than yaml and json (exit 2).
func checkOutputFormat(format string) error {
	if format == "" {
		return nil
	}
	for _, f := range outputFormats {
		if f == format {
			return nil
		}
	}
	return usageErrorf("unknown output format %q: use -o yaml or -o json", format)
}

// printObject writes obj as YAML or JSON with its apiVersion and kind, through
// cli-runtime's printers.
func printObject(out io.Writer, format string, obj runtime.Object) error {
	p, err := genericclioptions.NewJSONYamlPrintFlags().ToPrinter(format)
	if err != nil {
		return usageErrorf("output format %q: %v", format, err)
	}
	return printers.NewTypeSetter(scheme).ToPrinter(p).PrintObj(obj, out)
}
