import { html, nothing } from 'lit';
import { Live } from './base.js';
import { store } from './store.js';
import { condition, age, deliveryFailures, delivered } from './model.js';

// lastDelivery is an Alert's status.lastDelivery as `kubectl convoy alert list`
// shows it: "3m ago Applied of Release api: 200 OK", the result coloured; "never".
export function lastDelivery(a, now = Date.now()) {
  const d = a.status?.lastDelivery;
  if (!d) return html`<span data-testid="last-delivery">never</span>`;
  return html`<span data-testid="last-delivery" title=${d.time}>${age(d.time, now)} ago ${d.event} of ${d.object.kind} ${d.object.name}:
    <b class=${delivered(d.result) ? 'ok' : 'bad'} data-testid="result">${d.result || '—'}</b></span>`;
}

// Notifications: the Alerts (notifications out) and Receivers (webhooks in) of the
// namespaces the UI watches, with the same facts as `kubectl convoy alert list` and
// `receiver list`: Ready, the last delivery or call, failed attempts, the path.
class NotificationsPage extends Live {
  static properties = { info: {} };

  render() {
    const byName = (x, y) => x.metadata.namespace.localeCompare(y.metadata.namespace) || x.metadata.name.localeCompare(y.metadata.name);
    const alerts = store.list('Alert').sort(byName);
    const receivers = store.list('Receiver').sort(byName);
    const events = store.list('Event');
    const nss = this.info?.namespaces || [];
    const where = (n) => (n.name ? `namespace ${n.name}` : 'any namespace');
    const noAlerts = nss.filter((n) => !n.alerts);
    const noReceivers = nss.filter((n) => !n.receivers);
    const now = Date.now();
    return html`
      <h1>Notifications</h1>
      <p class="meta">Alerts send notifications about Releases and ReleaseSets out to Slack, Microsoft Teams or a webhook;
        Receivers take webhooks in and refresh sources. The failed attempts are those the cluster still keeps as the Alert's
        Warning Events (one per attempt).</p>
      <section aria-labelledby="h-alerts"><h2 id="h-alerts">Alerts</h2>
        ${noAlerts.length ? html`<p class="notice" data-testid="alerts-hidden">Not shown in ${noAlerts.map(where).join(', ')}:
          you may not list and watch Alerts there, or this convoy does not serve them.</p>` : nothing}
        <table aria-label="Alerts"><thead><tr><th>Namespace</th><th>Name</th><th>Target</th><th>Events</th><th>Ready</th>
          <th>Last delivery</th><th>Failed attempts</th><th>Age</th></tr></thead><tbody>
        ${alerts.length === 0 ? html`<tr><td colspan="8">No Alerts.</td></tr>` : nothing}
        ${alerts.map((a) => {
          const r = condition(a, 'Ready');
          const f = deliveryFailures(a, events);
          const reason = r?.status === 'False' ? r.reason : f.reason;
          return html`<tr data-alert="${a.metadata.namespace}/${a.metadata.name}">
            <td>${a.metadata.namespace}</td><td>${a.metadata.name}</td><td>${a.spec.provider.type}</td>
            <td>${(a.spec.events || []).join(', ')}</td>
            <td class="cond ${r?.status}" data-testid="ready" title=${r?.message || ''}>${r?.reason || '—'}${r?.status === 'False' ? html`<br><small>${r.message}</small>` : nothing}</td>
            <td>${lastDelivery(a, now)}</td>
            <td data-testid="failed" title=${f.message}>${f.count}${reason ? ` (${reason}${f.time ? `, last ${age(f.time, now)} ago` : ''})` : ''}</td>
            <td>${age(a.metadata.creationTimestamp, now)}</td></tr>`;
        })}
        </tbody></table>
      </section>
      <section aria-labelledby="h-receivers"><h2 id="h-receivers">Receivers</h2>
        ${noReceivers.length ? html`<p class="notice" data-testid="receivers-hidden">Not shown in ${noReceivers.map(where).join(', ')}:
          you may not list and watch Receivers there, or this convoy does not serve them.</p>` : nothing}
        <table aria-label="Receivers"><thead><tr><th>Namespace</th><th>Name</th><th>Type</th><th>Ready</th><th>Path</th>
          <th>Last call</th><th>Age</th></tr></thead><tbody>
        ${receivers.length === 0 ? html`<tr><td colspan="7">No Receivers.</td></tr>` : nothing}
        ${receivers.map((x) => {
          const r = condition(x, 'Ready');
          const c = x.status?.lastCall;
          return html`<tr data-receiver="${x.metadata.namespace}/${x.metadata.name}">
            <td>${x.metadata.namespace}</td><td>${x.metadata.name}</td><td>${x.spec.type}</td>
            <td class="cond ${r?.status}" data-testid="ready" title=${r?.message || ''}>${r?.reason || '—'}${r?.status === 'False' ? html`<br><small>${r.message}</small>` : nothing}</td>
            <td class="mono path" data-testid="path">${x.status?.webhookPath || '—'}</td>
            <td data-testid="last-call" title=${c?.time || ''}>${c ? `${age(c.time, now)} ago: ${c.result || '—'}` : 'never'}</td>
            <td>${age(x.metadata.creationTimestamp, now)}</td></tr>`;
        })}
        </tbody></table>
      </section>`;
  }
}
customElements.define('notifications-page', NotificationsPage);
