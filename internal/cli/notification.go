package cli

// alert and receiver: the notifications out (Alerts) and the webhooks in (Receivers)
// of a namespace, with their last delivery or call.

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func newAlertCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "alert",
		Aliases: []string{"alerts"},
		Short:   "Show Alerts: the notifications of a namespace to Slack, Teams or a webhook, and their last delivery",
		Args:    cobra.ArbitraryArgs,
		RunE:    helpOrUnknown,
	}
	cmd.AddCommand(newAlertListCommand(o), newAlertGetCommand(o))
	return cmd
}

func newAlertListCommand(o *Options) *cobra.Command {
	// The text reads the Alerts' Warning Events (one per failed attempt) for FAILED;
	// -o yaml|json prints only the Alerts.
	var ctx context.Context
	var client *Client
	var ns string
	return listCommand[*v1.AlertList]{
		kinds: "Alerts",
		short: "List Alerts: target, events, Ready, last delivery, failed attempts, age",
		list: func(c context.Context, cl *Client, namespace string) (*v1.AlertList, error) {
			ctx, client, ns = c, cl, namespace
			return cl.ListAlerts(c, namespace)
		},
		format: func(list *v1.AlertList, allNamespaces bool, now time.Time, t Terminal) string {
			var failures map[string]DeliveryFailures
			if events, err := client.AlertWarnings(ctx, ns); err == nil {
				failures = AlertFailures(events)
			}
			return FormatAlertList(list.Items, failures, allNamespaces, now, t)
		},
	}.command(o)
}

func newAlertGetCommand(o *Options) *cobra.Command {
	var output string
	return o.named(&cobra.Command{
		Use:   "get NAME",
		Short: "Show an Alert: target, events, selector, last delivery with its result, failed attempts, conditions",
		Long: "Show an Alert of the namespace: where it posts (spec.provider), which events of which Releases and " +
			"ReleaseSets it sends, its last delivery (status.lastDelivery: when, which event of which object, and what " +
			"the provider answered), the failed attempts that the cluster still keeps as the Alert's Warning Events " +
			"(convoy controller records one per failed attempt; Events expire, 1h by default), its conditions (Ready: " +
			"Delivered, DeliveryFailed or SecretNotFound) and what to do when it is not Ready.\n\n-o yaml|json prints the Alert.",
		Example: "  kubectl convoy alert get on-call -n shop",
	}, o.completeAlertNames, &output, func(ctx context.Context, ns, name string, c *Client) error {
		a, err := c.GetAlert(ctx, ns, name)
		if err != nil {
			return err
		}
		return o.show(output, a, func() (string, error) {
			var view AlertView
			events, err := c.AlertWarnings(ctx, ns)
			if err != nil {
				view.WarningsErr = err
			} else {
				view.Warnings = AlertWarningEvents(events, name)
			}
			return FormatAlert(a, view, o.Now(), o.Terminal(o.Streams.Out)), nil
		})
	})
}

func newReceiverCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "receiver",
		Aliases: []string{"receivers"},
		Short:   "Show Receivers: the webhook paths of a namespace that refresh sources, and their last call",
		Args:    cobra.ArbitraryArgs,
		RunE:    helpOrUnknown,
	}
	cmd.AddCommand(newReceiverListCommand(o), newReceiverGetCommand(o))
	return cmd
}

func newReceiverListCommand(o *Options) *cobra.Command {
	return listCommand[*v1.ReceiverList]{
		kinds: "Receivers",
		short: "List Receivers: type, Ready, webhook path, last call, age",
		list: func(ctx context.Context, c *Client, ns string) (*v1.ReceiverList, error) {
			return c.ListReceivers(ctx, ns)
		},
		format: func(list *v1.ReceiverList, allNamespaces bool, now time.Time, t Terminal) string {
			return FormatReceiverList(list.Items, allNamespaces, now, t)
		},
	}.command(o)
}

func newReceiverGetCommand(o *Options) *cobra.Command {
	var output string
	return o.named(&cobra.Command{
		Use:   "get NAME",
		Short: "Show a Receiver: type, Secret, selector, webhook path, last call with its result, conditions",
		Long: "Show a Receiver of the namespace: its caller type, the Secret with its token, which Releases and " +
			"ReleaseSets a call refreshes, the path calls go to on the controller's receiver server " +
			"(status.webhookPath), its last authenticated call (status.lastCall: when and what it did), its " +
			"conditions (Ready: Serving, SecretNotFound or ReceiverServerDisabled) and what to do when it is not Ready." +
			"\n\n-o yaml|json prints the Receiver.",
		Example: "  kubectl convoy receiver get github -n shop",
	}, o.completeReceiverNames, &output, func(ctx context.Context, ns, name string, c *Client) error {
		r, err := c.GetReceiver(ctx, ns, name)
		if err != nil {
			return err
		}
		return o.show(output, r, func() (string, error) {
			return FormatReceiver(r, o.Now(), o.Terminal(o.Streams.Out)), nil
		})
	})
}

// completeAlertNames completes the first argument with the namespace's Alerts.
func (o *Options) completeAlertNames(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return o.completeNames(args, toComplete, func(c *Client) (runtime.Object, error) {
		ns, err := o.Namespace()
		if err != nil {
			return nil, err
		}
		return c.ListAlerts(cmd.Context(), ns)
	})
}

// completeReceiverNames completes the first argument with the namespace's Receivers.
func (o *Options) completeReceiverNames(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return o.completeNames(args, toComplete, func(c *Client) (runtime.Object, error) {
		ns, err := o.Namespace()
		if err != nil {
			return nil, err
		}
		return c.ListReceivers(cmd.Context(), ns)
	})
}
