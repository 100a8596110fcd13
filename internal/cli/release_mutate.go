package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func newReleaseMutateCommand(o *Options) *cobra.Command {
	var file, output string
	cmd := &cobra.Command{
		Use:   "mutate NAME -f FILE",
		Short: "Replace a Release's mutations with those of FILE, through /mutations",
		Long: "FILE (- for stdin) is YAML or JSON: a list of mutations, or an object with a mutations field " +
			"(such as a Release manifest). An empty list removes every mutation. The write also requests a sync.",
		Example:           "  kubectl convoy release mutate podinfo -f mutations.yaml",
		Args:              exactArgs("NAME"),
		ValidArgsFunction: o.completeReleaseNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputFormat(output); err != nil {
				return err
			}
			if file == "" {
				return usageErrorf("-f FILE is required (- reads stdin)")
			}
			data, err := o.readFile(file)
			if err != nil {
				return err
			}
			mutations, err := ParseMutations(data)
			if err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			ns, name, c, err := o.releaseArg(args)
			if err != nil {
				return err
			}
			patch, err := json.Marshal(map[string]any{"mutations": mutations})
			if err != nil {
				return err
			}
			rel, err := c.MergePatch(cmd.Context(), ns, name, v1.SubresourceMutations, patch)
			if err != nil {
				return err
			}
			return o.show(output, rel, func() (string, error) {
				return fmt.Sprintf("release.%s/%s mutations set (%d)\n", v1.GroupName, name, len(rel.Mutations)), nil
			})
		},
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", "file with the mutations (- for stdin)")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	addOutputFlag(cmd, &output)
	return cmd
}

func (o *Options) readFile(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(o.Streams.In)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("reading the mutations: %w", err)
	}
	return b, nil
}

// ParseMutations reads a list of mutations, or an object with a mutations field,
// from YAML or JSON; unknown fields are errors.
func ParseMutations(data []byte) ([]v1.Mutation, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("empty file: write a list of mutations, or [] to remove them all")
	}
	j, err := yaml.YAMLToJSON(trimmed)
	if err != nil {
		return nil, fmt.Errorf("not YAML or JSON: %w", err)
	}
	mutations := []v1.Mutation{}
	if bytes.HasPrefix(bytes.TrimSpace(j), []byte("[")) {
		err = strictUnmarshal(j, &mutations)
	} else {
		var holder struct {
			Mutations []v1.Mutation `json:"mutations"`
		}
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(j, &probe); err != nil {
			return nil, err
		}
		if _, ok := probe["mutations"]; !ok {
			return nil, fmt.Errorf("no mutations: write a list of mutations, or an object with a mutations field")
		}
		holder.Mutations = mutations
		err = json.Unmarshal(j, &holder)
		mutations = holder.Mutations
	}
	if err != nil {
		return nil, fmt.Errorf("reading the mutations: %w", err)
	}
	if mutations == nil {
		mutations = []v1.Mutation{}
	}
	return mutations, nil
}

func strictUnmarshal(data []byte, into any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	return d.Decode(into)
}
