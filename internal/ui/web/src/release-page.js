import { html, nothing } from 'lit';
import { Live } from './base.js';
import { store } from './store.js';
import { get, post, releasePath } from './api.js';
import { condition, mode, shortRef, shortCommit, gitRef, age, requests, describe, alertSelects } from './model.js';
import { lastDelivery } from './notifications-page.js';

// commit shows a Git commit short, the full hash on hover.
function commit(c) {
  return html`<abbr class="mono" title=${c} data-commit=${c}>${shortCommit(c)}</abbr>`;
}

function unified(text) {
  return html`<pre class="diff">${text.split('\n').map((l) => html`<span class=${l.startsWith('+') ? 'add' : l.startsWith('-') ? 'del' : l.startsWith('@@') ? 'hunk' : ''}>${l}\n</span>`)}</pre>`;
}

function diffView(d, testid) {
  if (!d) return nothing;
  if (d.error) return html`<p class="error" role="alert">${d.error}</p>`;
  return html`<div class="diffs" data-testid=${testid}>
    <p>${d.objects.length === 0 ? 'No differences' : `${d.objects.length} object(s) change`}${d.unchanged ? `, ${d.unchanged} unchanged` : ''}.</p>
    ${d.objects.map((o) => html`<details open class="diff-object">
      <summary><span class="action ${o.action}">${o.action}</span> ${o.name}
        ${o.fields?.length ? html`<span class="fields">${o.fields.join(', ')}</span>` : nothing}</summary>
      ${o.unified ? unified(o.unified) : nothing}
    </details>`)}
  </div>`;
}

class ReleasePage extends Live {
  static properties = {
    namespace: {}, name: {}, info: {},
    access: { state: true }, clusterDiff: { state: true }, renderDiff: { state: true },
    selected: { state: true }, started: { state: true }, error: { state: true }, busy: { state: true },
    renderChanged: { state: true },
  };

  constructor() {
    super();
    this.access = null;
    this.clusterDiff = null;
    this.renderDiff = null;
    this.selected = [];
    this.started = null;
    this.error = '';
    this.busy = false;
    this.renderChanged = false;
    this.diffFor = '';
  }

  willUpdate(changed) {
    if (changed.has('namespace') || changed.has('name')) {
      // Another Release in the same element: forget what belonged to the last one.
      this.clusterDiff = null;
      this.renderDiff = null;
      this.selected = [];
      this.started = null;
      this.error = '';
      this.renderChanged = false;
      this.diffFor = '';
    }
    if (changed.has('namespace')) {
      this.access = null;
      get(`/api/access?namespace=${encodeURIComponent(this.namespace)}`)
        .then((a) => { this.access = a; })
        .catch((e) => { this.access = { sync: false, pin: false, diff: false }; this.error = e.message; });
    }
  }

  updated() {
    const rel = store.get('Release', `${this.namespace}/${this.name}`);
    if (!rel || !this.access?.diff) return;
    // The cluster diff is asked for again whenever the render or the handled
    // sync changes (the watch tells), so it follows the Release live.
    const stamp = `${rel.status?.render?.ref}|${rel.status?.lastHandledSyncAt}|${condition(rel, 'Applied')?.reason}`;
    if (rel.status?.render?.ref && stamp !== this.diffFor) {
      this.diffFor = stamp;
      this.loadClusterDiff();
    }
  }

  async loadClusterDiff() {
    try {
      this.clusterDiff = await get(releasePath(this.namespace, this.name, 'diff'));
    } catch (e) {
      this.clusterDiff = { error: e.message };
    }
  }

  async act(what, fn) {
    this.busy = true;
    this.error = '';
    try {
      await fn();
    } catch (e) {
      this.error = `${what}: ${e.message}`;
    } finally {
      this.busy = false;
    }
  }

  // shownRender is the render whose diff the page shows: the one a Sync approves.
  // Without a diff (not loaded yet, or no right to read Renders) it is the render the
  // diff's heading names, the Release's current one.
  shownRender(rel) {
    return (this.clusterDiff && !this.clusterDiff.error && this.clusterDiff.to) || rel?.status?.render?.ref || '';
  }

  // sync approves the render whose diff the page shows (?render=REF): convoy applies
  // that render and no other. When it is no longer the Release's (409), nothing was
  // requested: the page draws the new diff and asks for a new approval.
  sync(force) {
    const rel = store.get('Release', `${this.namespace}/${this.name}`);
    const render = this.shownRender(rel);
    return this.act(force ? 'Force sync' : 'Sync', async () => {
      const q = new URLSearchParams();
      if (force) q.set('force', 'true');
      if (render) q.set('render', render);
      const query = q.toString();
      let r;
      try {
        r = await post(`${releasePath(this.namespace, this.name, 'sync')}${query ? `?${query}` : ''}`);
      } catch (e) {
        if (e.status === 409 && e.body?.renderChanged) {
          this.started = null;
          await this.loadClusterDiff();
          this.renderChanged = true;
        }
        throw e;
      }
      this.renderChanged = false;
      this.started = { what: force ? 'Force sync' : 'Sync', at: force ? r.forceRequestedAt : r.requestedAt, force, render: r.render };
    });
  }

  confirmForce() {
    this.querySelector('#force-dialog').showModal();
  }

  pin(ref) {
    const reason = this.querySelector('#pin-reason')?.value || '';
    return this.act('Pin', () => post(releasePath(this.namespace, this.name, 'pin'), { renderRef: ref, reason }));
  }

  unpin() {
    return this.act('Unpin', () => post(releasePath(this.namespace, this.name, 'unpin')));
  }

  async compare() {
    const [a, b] = this.selected;
    try {
      this.renderDiff = await get(`${releasePath(this.namespace, this.name, 'renderdiff')}?from=${encodeURIComponent(a)}&to=${encodeURIComponent(b)}`);
    } catch (e) {
      this.renderDiff = { error: e.message };
    }
  }

  toggle(ref, on) {
    const s = this.selected.filter((r) => r !== ref);
    if (on) s.push(ref);
    this.selected = s.slice(-2);
  }

  progress(rel) {
    if (!this.started) return nothing;
    const handledAt = this.started.force ? rel.status?.lastHandledForceSyncAt : rel.status?.lastHandledSyncAt;
    const handled = handledAt && Date.parse(handledAt) >= Date.parse(this.started.at);
    const applied = condition(rel, 'Applied');
    const healthy = condition(rel, 'Healthy');
    const wave = rel.status?.syncWave;
    return html`<section class="progress" aria-live="polite" data-testid="sync-progress">
      <h2>Your ${this.started.what.toLowerCase()}</h2>
      <p>Requested at ${this.started.at}${this.started.render ? html` for render <span class="mono" data-testid="sync-render">${shortRef(this.started.render)}</span>` : nothing}. ${handled
        ? html`Handled at ${handledAt}: Applied <b>${applied?.reason}</b>, Healthy <b>${healthy?.reason || '—'}</b>${wave ? html`, sync wave ${wave.current + 1} of ${wave.total}` : nothing}.`
        : html`Waiting for the controller to handle it…`}</p>
    </section>`;
  }

  render() {
    const key = `${this.namespace}/${this.name}`;
    const rel = store.get('Release', key);
    if (!rel) return html`<p><a href="#/">Releases</a></p><p role="alert">Release ${key} does not exist (or was deleted).</p>`;
    const inv = store.get('ReleaseInventory', key);
    const renders = store.list('Render').filter((r) => r.metadata.namespace === this.namespace && r.release === this.name)
      .sort((a, b) => Date.parse(b.metadata.creationTimestamp) - Date.parse(a.metadata.creationTimestamp));
    const events = store.list('Event').filter((e) => e.involvedObject.kind === 'Release' && e.involvedObject.namespace === this.namespace && e.involvedObject.name === this.name)
      .sort((a, b) => Date.parse(b.lastTimestamp || b.eventTime || b.metadata.creationTimestamp) - Date.parse(a.lastTimestamp || a.eventTime || a.metadata.creationTimestamp));
    const st = rel.status || {};
    const a = this.access || {};
    return html`
      <p class="crumbs"><a href="#/">Releases</a> / ${this.namespace}</p>
      <h1>${rel.metadata.name} <span class="badge">${mode(rel)}</span>${rel.pin ? html` <span class="badge pinned">Pinned ${shortRef(rel.pin.renderRef)}</span>` : nothing}</h1>
      <p class="meta">${this.chart(rel)};
        cluster ${rel.spec.cluster || '(host)'}, cluster wave ${rel.spec.clusterWave || 0}</p>
      <div class="actions" role="toolbar" aria-label="Actions" data-access=${this.access ? 'loaded' : 'loading'}>
        ${a.sync ? html`
          <button data-testid="sync" data-approves=${this.shownRender(rel)} title=${this.shownRender(rel) ? `Approve render ${shortRef(this.shownRender(rel))}, the one the diff below shows` : 'Approve the current render'}
            ?disabled=${this.busy} @click=${() => this.sync(false)}>Sync</button>
          <button data-testid="force" class="danger" ?disabled=${this.busy} @click=${() => this.confirmForce()}>Force sync…</button>` : nothing}
        ${a.pin && rel.pin ? html`<button data-testid="unpin" ?disabled=${this.busy} @click=${() => this.unpin()}>Unpin</button>` : nothing}
        ${a.pin && !rel.pin && st.lastSuccessful ? html`<button data-testid="pin-last" ?disabled=${this.busy} @click=${() => this.pin('')}>Pin to last successful</button>` : nothing}
        ${a.pin ? html`<label>Pin reason <input id="pin-reason" type="text" placeholder="optional"></label>` : nothing}
      </div>
      ${a.sync ? html`<dialog id="force-dialog" aria-labelledby="force-title">
        <form method="dialog">
          <h2 id="force-title">Force sync ${rel.metadata.name}?</h2>
          <p>A force sync skips the pre-apply dry run and restarts the rollout: the render is applied even if the
            server would reject part of it, and the health deadline starts again.</p>
          <menu><button value="cancel">Cancel</button>
            <button value="force" class="danger" data-testid="force-confirm" @click=${() => this.sync(true)}>Force sync</button></menu>
        </form>
      </dialog>` : nothing}
      ${this.error ? html`<p class="error" role="alert" data-testid="action-error">${this.error}</p>` : nothing}
      ${this.renderChanged ? html`<p class="notice" role="status" data-testid="render-changed">The render changed before your Sync:
        the diff below is the new render ${shortRef(this.shownRender(rel))}. Review it and press Sync again to approve it.</p>` : nothing}
      ${this.progress(rel)}

      <section aria-labelledby="h-conditions"><h2 id="h-conditions">Conditions</h2>
        <table><thead><tr><th>Type</th><th>Status</th><th>Reason</th><th>Message</th><th>Since</th></tr></thead><tbody>
        ${(st.conditions || []).map((c) => html`<tr data-condition=${c.type}><td>${c.type}</td><td class="cond ${c.status}">${c.status}</td>
          <td data-testid="reason-${c.type}">${c.reason}</td><td>${c.message}</td><td>${age(c.lastTransitionTime)}</td></tr>`)}
        </tbody></table>
      </section>

      <section aria-labelledby="h-requests"><h2 id="h-requests">Sync requests</h2>
        ${requests(rel).length === 0 ? html`<p>None.</p>` : html`<ul>${requests(rel).map((q) => html`<li>${q.what} requested at ${q.requested}:
          ${q.pending ? html`<b>pending</b>` : html`handled at ${q.handled}`}</li>`)}</ul>`}
      </section>

      ${this.waves(rel, inv)}
      ${this.hooks(st, inv)}

      <section aria-labelledby="h-rollout"><h2 id="h-rollout">Rollout</h2>
        ${st.rollout ? html`<p>${st.rollout.phase} of ${shortRef(st.rollout.renderRef)}${st.rollout.previousRenderRef ? html` (previous ${shortRef(st.rollout.previousRenderRef)})` : nothing};
          deadline ${st.rollout.deadline || '—'}. ${st.rollout.message || ''}</p>` : html`<p>No rollout.</p>`}
      </section>

      <section aria-labelledby="h-drift"><h2 id="h-drift">Drift</h2>
        ${inv?.status?.drift?.drifted?.length ? html`<p>Since ${inv.status.drift.since}:</p><ul>${inv.status.drift.drifted.map((d) => html`<li>${describe(d)}: ${d.fields.join(', ')}</li>`)}</ul>`
          : html`<p>${inv?.status?.drift ? 'No drift.' : 'Not checked (spec.syncPolicy.interval unset, or not checked yet).'}</p>`}
      </section>

      <section aria-labelledby="h-diff"><h2 id="h-diff">Diff: cluster → current render <span class="mono" data-testid="diff-render">${shortRef(this.shownRender(rel))}</span></h2>
        ${!a.diff ? html`<p>You may not read this Release's Renders.</p>` : this.clusterDiff ? diffView(this.clusterDiff, 'cluster-diff') : html`<p role="status">Computing…</p>`}
      </section>

      <section aria-labelledby="h-history"><h2 id="h-history">Render history</h2>
        <table><thead><tr><th><span class="sr-only">Compare</span></th><th>Render</th><th>Chart</th><th>Objects</th><th>Created</th><th>State</th><th></th></tr></thead><tbody>
        ${renders.map((r) => html`<tr data-render=${r.renderRef}>
          <td><input type="checkbox" aria-label="compare ${shortRef(r.renderRef)}" .checked=${this.selected.includes(r.renderRef)} @change=${(e) => this.toggle(r.renderRef, e.target.checked)}></td>
          <td class="mono">${shortRef(r.renderRef)}</td><td>${r.chart.name} ${r.chart.version || ''}${r.chart.commit ? html` at ${commit(r.chart.commit)}` : nothing}</td><td>${r.objectCount || 0}</td>
          <td>${age(r.metadata.creationTimestamp)}</td><td>${this.renderState(rel, r.renderRef)}</td>
          <td>${a.pin && rel.pin?.renderRef !== r.renderRef ? html`<button @click=${() => this.pin(r.renderRef)}>Pin</button>` : nothing}</td></tr>`)}
        </tbody></table>
        <button ?disabled=${this.selected.length !== 2} @click=${() => this.compare()}>Diff the two selected renders</button>
        ${diffView(this.renderDiff, 'render-diff')}
      </section>

      ${this.alerts(rel)}

      <section aria-labelledby="h-events"><h2 id="h-events">Events</h2>
        ${events.length === 0 ? html`<p>None.</p>` : html`<table><thead><tr><th>Type</th><th>Reason</th><th>Message</th><th>Age</th></tr></thead><tbody>
          ${events.slice(0, 50).map((e) => html`<tr><td>${e.type}</td><td>${e.reason}</td><td>${e.message}</td><td>${age(e.lastTimestamp || e.eventTime || e.metadata.creationTimestamp)}</td></tr>`)}
        </tbody></table>`}
      </section>`;
  }

  // chart is the meta line's chart: its repository and version, or for a chart from
  // Git its folder, repository and ref with the commits of the current render and of
  // the last successful one.
  chart(rel) {
    const c = rel.spec.chart || {};
    if (!c.git) return html`Chart ${c.name} ${c.version || ''} from ${c.repository}`;
    const st = rel.status || {};
    return html`Chart <span data-testid="git-source">${c.git.path || '.'} of ${c.git.url} at ${gitRef(c.git.ref)}</span>${
      st.render?.commit ? html`, current render at <span data-testid="render-commit">${commit(st.render.commit)}</span>` : nothing}${
      st.lastSuccessful?.commit ? html`, last successful at <span data-testid="last-successful-commit">${commit(st.lastSuccessful.commit)}</span>` : nothing}`;
  }

  // alerts are the Alerts of the namespace whose selector selects this Release, with
  // the events they send and their last delivery; nothing when the user may not
  // list Alerts there (or convoy serves none).
  alerts(rel) {
    const ns = (this.info?.namespaces || []).find((n) => n.name === '' || n.name === this.namespace);
    if (!ns?.alerts) return nothing;
    const alerts = store.list('Alert').filter((a) => alertSelects(a, rel))
      .sort((x, y) => x.metadata.name.localeCompare(y.metadata.name));
    return html`<section aria-labelledby="h-alerts"><h2 id="h-alerts">Alerts</h2>
      ${alerts.length === 0 ? html`<p>No Alert of namespace ${this.namespace} selects this Release: its events are not sent anywhere.</p>` : html`
      <table><thead><tr><th>Alert</th><th>Target</th><th>Events sent</th><th>Ready</th><th>Last delivery</th></tr></thead><tbody>
        ${alerts.map((a) => { const r = condition(a, 'Ready'); return html`<tr data-release-alert=${a.metadata.name}>
          <td><a href="#/notifications">${a.metadata.name}</a></td><td>${a.spec.provider.type}</td><td>${(a.spec.events || []).join(', ')}</td>
          <td class="cond ${r?.status}" title=${r?.message || ''}>${r?.reason || '—'}</td><td>${lastDelivery(a)}</td></tr>`; })}
      </tbody></table>`}
    </section>`;
  }

  renderState(rel, ref) {
    const st = rel.status || {};
    const tags = [];
    if (st.render?.ref === ref) tags.push('current');
    if (st.lastSuccessful?.renderRef === ref) tags.push('last successful');
    if (rel.pin?.renderRef === ref) tags.push('pinned');
    if (st.rollout?.renderRef === ref) tags.push(st.rollout.phase === 'RolledBack' ? 'rolled back' : `rollout ${st.rollout.phase.toLowerCase()}`);
    return tags.join(', ');
  }

  waves(rel, inv) {
    const health = new Map((inv?.status?.objects || []).map((o) => [describe(o), o]));
    const byWave = new Map();
    for (const o of inv?.objects || []) {
      const w = o.wave || 0;
      if (!byWave.has(w)) byWave.set(w, []);
      byWave.get(w).push(o);
    }
    const waves = [...byWave.keys()].sort((x, y) => x - y);
    const wh = new Map((inv?.status?.waves || []).map((w) => [w.wave, w.health]));
    const cur = rel.status?.syncWave;
    return html`<section aria-labelledby="h-waves"><h2 id="h-waves">Sync waves${cur ? ` (applying ${cur.current + 1} of ${cur.total})` : ''}</h2>
      ${waves.length === 0 ? html`<p>Nothing applied yet.</p>` : html`<ol class="strip">${waves.map((w) => html`<li class="wave health-${wh.get(w) || 'Unknown'}">
        <b>Wave ${w}</b> <span>${wh.get(w) || ''}</span>
        <ul>${byWave.get(w).map((o) => { const h = health.get(describe(o)); return html`<li class="health-${h?.health || 'Unknown'}" title=${h?.message || ''}>${describe(o)}: ${h?.health || '—'}</li>`; })}</ul>
      </li>`)}</ol>`}
    </section>`;
  }

  hooks(st, inv) {
    const hs = st.hooks?.length ? st.hooks : inv?.status?.hooks || [];
    return html`<section aria-labelledby="h-hooks"><h2 id="h-hooks">Hooks</h2>
      ${hs.length === 0 ? html`<p>None.</p>` : html`<table><thead><tr><th>Batch</th><th>Phase</th><th>Hook</th><th>Run</th><th>Job</th><th>State</th><th>Message</th></tr></thead><tbody>
        ${hs.map((h) => html`<tr><td>${h.batch || 0}</td><td>${h.hookPhase || ''}</td><td>${h.name}</td><td>${h.run || ''}</td><td>${h.job || '(object)'}</td><td>${h.phase || ''}</td><td>${h.message || ''}</td></tr>`)}
      </tbody></table>`}
    </section>`;
  }
}
customElements.define('release-page', ReleasePage);
