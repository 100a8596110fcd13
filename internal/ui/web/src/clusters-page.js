import { html, nothing } from 'lit';
import { Live } from './base.js';
import { store } from './store.js';
import { condition, state, age } from './model.js';

// Clusters with reachability and version, and each Cluster's cluster waves as
// ordered lanes of its Releases.
class ClustersPage extends Live {
  render() {
    const clusters = store.list('Cluster').sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    const releases = store.list('Release');
    const names = [...new Set(['', ...clusters.map((c) => c.metadata.name), ...releases.map((r) => r.spec.cluster || '')])];
    return html`
      <h1>Clusters</h1>
      <table><thead><tr><th>Name</th><th>Ready</th><th>Version</th><th>Kubeconfig</th><th>Age</th></tr></thead><tbody>
        ${clusters.length === 0 ? html`<tr><td colspan="5">No Clusters (or you may not list them).</td></tr>` : nothing}
        ${clusters.map((c) => { const r = condition(c, 'Ready'); return html`<tr data-cluster=${c.metadata.name}>
          <td>${c.metadata.name}</td><td class="cond ${r?.status}" title=${r?.message || ''}>${r?.reason || '—'}</td>
          <td>${c.status?.kubernetesVersion || '—'}</td>
          <td>${c.spec.kubeconfig.secretRef.namespace}/${c.spec.kubeconfig.secretRef.name}</td><td>${age(c.metadata.creationTimestamp)}</td></tr>`; })}
      </tbody></table>
      <h2>Cluster waves</h2>
      ${names.map((n) => this.lanes(n, releases.filter((r) => (r.spec.cluster || '') === n)))}`;
  }

  lanes(cluster, releases) {
    if (releases.length === 0) return nothing;
    const waves = [...new Set(releases.map((r) => r.spec.clusterWave || 0))].sort((a, b) => a - b);
    return html`<section class="lanes" aria-label="Cluster waves of ${cluster || 'the host cluster'}">
      <h3>${cluster || '(host)'}</h3>
      <ol>${waves.map((w) => html`<li class="lane"><b>Wave ${w}</b><ul>
        ${releases.filter((r) => (r.spec.clusterWave || 0) === w).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name)).map((r) => html`<li class="chip state-${state(r)}">
          <a href="#/releases/${encodeURIComponent(r.metadata.namespace)}/${encodeURIComponent(r.metadata.name)}">${r.metadata.namespace}/${r.metadata.name}</a> <span>${state(r)}</span></li>`)}
      </ul></li>`)}</ol>
    </section>`;
  }
}
customElements.define('clusters-page', ClustersPage);
