import { html, nothing } from 'lit';
import { Base, Live } from './base.js';
import '@lit-labs/virtualizer';
import './style.css';
import { store } from './store.js';
import { get } from './api.js';
import { mode, state, states, condition, shortRef, age } from './model.js';
import './release-page.js';
import './clusters-page.js';
import './fleets-page.js';
import './notifications-page.js';

class ConvoyApp extends Base {
  static properties = { route: { state: true }, info: { state: true } };

  constructor() {
    super();
    this.route = location.hash;
    this.info = null;
    window.addEventListener('hashchange', () => { this.route = location.hash; });
    store.addEventListener('change', () => this.requestUpdate());
    store.connect();
    get('/api/info').then((i) => { this.info = i; }).catch(() => {});
  }

  page() {
    const r = this.route.replace(/^#/, '');
    let m = r.match(/^\/releases\/([^/]+)\/([^/]+)$/);
    if (m) return html`<release-page .namespace=${decodeURIComponent(m[1])} .name=${decodeURIComponent(m[2])} .info=${this.info}></release-page>`;
    if (r === '/clusters') return html`<clusters-page></clusters-page>`;
    m = r.match(/^\/releasesets\/([^/]+)\/([^/]+)$/);
    if (m) return html`<releaseset-page .namespace=${decodeURIComponent(m[1])} .name=${decodeURIComponent(m[2])}></releaseset-page>`;
    if (r === '/releasesets') return html`<releaseset-list></releaseset-list>`;
    if (r === '/notifications') return html`<notifications-page .info=${this.info}></notifications-page>`;
    return html`<release-list></release-list>`;
  }

  render() {
    const r = this.route.replace(/^#/, '');
    const scope = this.info ? (this.info.allNamespaces ? 'all namespaces' : `namespace ${this.info.namespaces.map((n) => n.name).join(', ')}`) : '';
    return html`
      <header class="top">
        <a class="brand" href="#/">convoy</a>
        <nav aria-label="Pages">
          <a href="#/" aria-current=${r === '' || r === '/' ? 'page' : nothing}>Releases</a>
          <a href="#/releasesets" aria-current=${r.startsWith('/releasesets') ? 'page' : nothing}>Fleets</a>
          <a href="#/clusters" aria-current=${r === '/clusters' ? 'page' : nothing}>Clusters</a>
          <a href="#/notifications" aria-current=${r === '/notifications' ? 'page' : nothing}>Notifications</a>
        </nav>
        <span class="scope">${this.info?.context ? html`context <b>${this.info.context}</b>, ` : nothing}${scope}</span>
        <span class="live ${store.connected ? 'on' : 'off'}" role="status" data-testid="connection">
          ${store.connected ? (store.synced ? 'live' : 'loading…') : 'reconnecting…'}</span>
      </header>
      <main id="main">${store.synced ? this.page() : html`<p class="loading" role="status">Loading from the cluster…</p>`}</main>`;
  }
}
customElements.define('convoy-app', ConvoyApp);

class ReleaseList extends Live {
  static properties = {
    ns: { state: true }, cluster: { state: true }, syncMode: { state: true }, st: { state: true }, text: { state: true },
  };

  constructor() {
    super();
    const q = new URLSearchParams(sessionStorage.getItem('convoy-filters') || '');
    this.ns = q.get('ns') || '';
    this.cluster = q.get('cluster') || '';
    this.syncMode = q.get('mode') || '';
    this.st = q.get('state') || '';
    this.text = q.get('text') || '';
  }

  updated() {
    const q = new URLSearchParams({ ns: this.ns, cluster: this.cluster, mode: this.syncMode, state: this.st, text: this.text });
    sessionStorage.setItem('convoy-filters', q.toString());
  }

  render() {
    const all = store.list('Release').sort((a, b) =>
      a.metadata.namespace.localeCompare(b.metadata.namespace) || a.metadata.name.localeCompare(b.metadata.name));
    const namespaces = [...new Set(all.map((r) => r.metadata.namespace))].sort();
    const clusters = [...new Set(all.map((r) => r.spec.cluster || ''))].sort();
    const base = all.filter((r) =>
      (!this.ns || r.metadata.namespace === this.ns) &&
      (!this.cluster || (r.spec.cluster || '(host)') === this.cluster) &&
      (!this.syncMode || mode(r) === this.syncMode) &&
      (!this.text || r.metadata.name.includes(this.text) ||
        (r.status?.conditions || []).some((c) => c.reason.includes(this.text) || (c.message || '').includes(this.text))));
    const counts = Object.fromEntries(states.map((s) => [s, 0]));
    for (const r of base) counts[state(r)]++;
    const shown = this.st ? base.filter((r) => state(r) === this.st) : base;
    const now = Date.now();
    return html`
      <h1>Releases</h1>
      <form class="filters" @submit=${(e) => e.preventDefault()} aria-label="Filter Releases">
        <label>Namespace <select @change=${(e) => { this.ns = e.target.value; }}>
          <option value="">all</option>
          ${namespaces.map((n) => html`<option ?selected=${n === this.ns}>${n}</option>`)}
        </select></label>
        <label>Cluster <select @change=${(e) => { this.cluster = e.target.value; }}>
          <option value="">all</option>
          ${clusters.map((c) => html`<option ?selected=${(c || '(host)') === this.cluster}>${c || '(host)'}</option>`)}
        </select></label>
        <label>Mode <select @change=${(e) => { this.syncMode = e.target.value; }}>
          <option value="">all</option>
          ${['Automatic', 'Manual'].map((m) => html`<option ?selected=${m === this.syncMode}>${m}</option>`)}
        </select></label>
        <label>Name or reason <input type="search" .value=${this.text} @input=${(e) => { this.text = e.target.value; }}></label>
      </form>
      <div class="counts" role="group" aria-label="Releases by state">
        <button class="count ${this.st === '' ? 'selected' : ''}" aria-pressed=${this.st === ''} @click=${() => { this.st = ''; }}>
          All <b data-testid="count-all">${base.length}</b></button>
        ${states.map((s) => html`<button class="count state-${s} ${this.st === s ? 'selected' : ''}" aria-pressed=${this.st === s}
          @click=${() => { this.st = this.st === s ? '' : s; }}>${s} <b data-testid="count-${s}">${counts[s]}</b></button>`)}
      </div>
      <div class="table releases" role="table" aria-label="Releases" aria-rowcount=${shown.length + 1}>
        <div class="row head" role="row">
          <span role="columnheader">Namespace</span><span role="columnheader">Name</span>
          <span role="columnheader">Cluster</span><span role="columnheader">Wave</span>
          <span role="columnheader">Mode</span><span role="columnheader">Applied</span>
          <span role="columnheader">Healthy</span><span role="columnheader">Render</span>
          <span role="columnheader">Age</span>
        </div>
        ${shown.length === 0 ? html`<p class="empty">No Releases match.</p>` : html`
        <lit-virtualizer class="rows" scroller .items=${shown} .keyFunction=${(r) => r.metadata.uid}
          .renderItem=${(r) => this.row(r, now)}></lit-virtualizer>`}
      </div>`;
  }

  row(r, now) {
    const applied = condition(r, 'Applied');
    const healthy = condition(r, 'Healthy');
    const href = `#/releases/${encodeURIComponent(r.metadata.namespace)}/${encodeURIComponent(r.metadata.name)}`;
    return html`<div class="row state-${state(r)}" role="row" data-release="${r.metadata.namespace}/${r.metadata.name}">
      <span role="cell">${r.metadata.namespace}</span>
      <span role="cell"><a href=${href}>${r.metadata.name}</a></span>
      <span role="cell">${r.spec.cluster || '(host)'}</span>
      <span role="cell">${r.spec.clusterWave || 0}</span>
      <span role="cell">${mode(r)}</span>
      <span role="cell" class="cond ${applied?.status}" data-testid="applied" title=${applied?.message || ''}>${applied?.reason || '—'}</span>
      <span role="cell" class="cond ${healthy?.status}" data-testid="healthy" title=${healthy?.message || ''}>${healthy?.reason || '—'}</span>
      <span role="cell" class="mono">${shortRef(r.status?.render?.ref)}</span>
      <span role="cell">${age(r.metadata.creationTimestamp, now)}</span>
    </div>`;
  }
}
customElements.define('release-list', ReleaseList);
