import { html, nothing } from 'lit';
import { Live } from './base.js';
import { store } from './store.js';
import { get, post, releaseSetPath } from './api.js';
import {
  condition, age, shortRevision, rolloutStage, setReleaseState, stageOf, selects, sourceText, specStage, maxUnavailable,
  stageTiming, shortDuration, parseDuration, overridesFor, overrideValues, sortedJSON,
} from './model.js';

// The fleet view: ReleaseSets, and for one set its stages as lanes with each
// Cluster's Release at the set's revision. Everything shown is the API's state
// (status.stages, the Releases' own status); Promote is offered only to users a
// SelfSubjectAccessReview allows create on releasesets/promote. Which
// clusterOverrides select a Cluster, and the values they give it, are worked out
// from spec.clusterOverrides and the Cluster's labels, as the controller does.

// haltHelp says what to do about a halt, by the Halted reason.
const haltHelp = {
  MassRemoval: 'If the clusterSelector or the Clusters\' labels are wrong, fix them; if the removal is meant, Promote acknowledges it: the set then deletes exactly the Releases listed.',
  ReleaseFailed: 'Promote does not resume a halted rollout: fix what failed, then change spec.template or spec.clusterOverrides (a new revision starts over).',
  StageDeadlineExceeded: 'Promote does not resume a halted rollout: see why the stage\'s Releases are not Ready, fix that, then change spec.template or spec.clusterOverrides (a new revision starts over).',
};

function setHref(s) {
  return `#/releasesets/${encodeURIComponent(s.metadata.namespace)}/${encodeURIComponent(s.metadata.name)}`;
}

function releaseHref(r) {
  return `#/releases/${encodeURIComponent(r.metadata.namespace)}/${encodeURIComponent(r.metadata.name)}`;
}

function readyCount(set) {
  let ready = 0;
  let clusters = 0;
  for (const s of set.status?.stages || []) {
    ready += s.ready || 0;
    clusters += s.clusters || 0;
  }
  return `${ready}/${clusters}`;
}

class ReleaseSetList extends Live {
  render() {
    const sets = store.list('ReleaseSet').sort((a, b) =>
      a.metadata.namespace.localeCompare(b.metadata.namespace) || a.metadata.name.localeCompare(b.metadata.name));
    return html`
      <h1>Fleets</h1>
      <p class="meta">ReleaseSets deliver one chart to every Cluster they select, one Release per Cluster, stage by stage.</p>
      <table aria-label="ReleaseSets"><thead><tr><th>Namespace</th><th>Name</th><th>Revision</th><th>Stage</th><th>Ready</th><th>Age</th></tr></thead><tbody>
        ${sets.length === 0 ? html`<tr><td colspan="6">No ReleaseSets (or you may not list them).</td></tr>` : nothing}
        ${sets.map((s) => { const st = rolloutStage(s); return html`<tr data-releaseset="${s.metadata.namespace}/${s.metadata.name}">
          <td>${s.metadata.namespace}</td><td><a href=${setHref(s)}>${s.metadata.name}</a></td>
          <td class="mono">${shortRevision(s.status?.revision) || '—'}</td>
          <td data-testid="stage" class="phase-${st?.phase || 'None'}">${st ? st.text : '—'}</td>
          <td data-testid="ready">${s.status?.stages?.length ? readyCount(s) : '—'}</td><td>${age(s.metadata.creationTimestamp)}</td></tr>`; })}
      </tbody></table>`;
  }
}
customElements.define('releaseset-list', ReleaseSetList);

class ReleaseSetPage extends Live {
  static properties = {
    namespace: {}, name: {},
    access: { state: true }, error: { state: true }, busy: { state: true }, promoted: { state: true },
  };

  constructor() {
    super();
    this.access = null;
    this.error = '';
    this.busy = false;
    this.promoted = null;
  }

  // A tick each second keeps the stages' "deadline in …" counting down (it renders
  // again only while a deadline is to come).
  connectedCallback() {
    super.connectedCallback();
    this.tick = setInterval(() => { if (this.counting) this.requestUpdate(); }, 1000);
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    clearInterval(this.tick);
  }

  willUpdate(changed) {
    if (changed.has('namespace') || changed.has('name')) {
      this.error = '';
      this.promoted = null;
    }
    if (changed.has('namespace')) {
      this.access = null;
      get(`/api/access?namespace=${encodeURIComponent(this.namespace)}`)
        .then((a) => { this.access = a; })
        .catch((e) => { this.access = { promote: false }; this.error = e.message; });
    }
  }

  async promote() {
    this.busy = true;
    this.error = '';
    try {
      this.promoted = await post(releaseSetPath(this.namespace, this.name, 'promote'));
    } catch (e) {
      this.error = `Promote: ${e.message}`;
    } finally {
      this.busy = false;
    }
  }

  // lanes are the stages in rollout order, each with the Releases (and the
  // selected Clusters without a Release yet) that it takes.
  lanes(set, releases) {
    const revision = set.status?.revision;
    const clusters = new Map(store.list('Cluster').map((c) => [c.metadata.name, c]));
    const statuses = set.status?.stages?.length
      ? set.status.stages
      : [...(set.spec.strategy?.stages || []).map((s) => ({ name: s.name })), { name: 'rest' }];
    const lanes = statuses.map((s) => ({ status: s, items: [] }));
    const byName = new Map(lanes.map((l) => [l.status.name, l]));
    const unknown = { status: { name: 'Stage not known' }, items: [], unknown: true };
    const withRelease = new Set();
    for (const r of releases) {
      const cluster = r.spec.cluster || '';
      withRelease.add(cluster);
      const c = clusters.get(cluster);
      const lane = c ? byName.get(stageOf(set, c.metadata.labels)) : undefined;
      (lane || unknown).items.push({ cluster, labels: c?.metadata.labels, release: r, state: setReleaseState(r, revision) });
    }
    const skipped = new Set((set.status?.skipped || []).map((s) => s.name));
    for (const c of clusters.values()) {
      const name = c.metadata.name;
      if (withRelease.has(name) || skipped.has(name) || !selects(set, c.metadata.labels)) continue;
      const lane = byName.get(stageOf(set, c.metadata.labels));
      if (lane) lane.items.push({ cluster: name, labels: c.metadata.labels || {}, state: 'NotStarted' });
    }
    if (unknown.items.length) lanes.push(unknown);
    for (const l of lanes) l.items.sort((a, b) => a.cluster.localeCompare(b.cluster));
    return lanes.filter((l) => l.status.phase || l.items.length || l.unknown);
  }

  approval(set, stage) {
    const spec = (set.spec.strategy?.stages || []).find((s) => s.name === stage);
    if (spec?.approval !== 'Manual') return 'Automatic';
    const a = [...(set.approvals || [])].reverse().find((x) => x.stage === stage && x.revision === set.status?.revision);
    return a ? `Manual, approved${a.approvedBy ? ` by ${a.approvedBy}` : ''}` : 'Manual';
  }

  overridesText(set, labels) {
    const idx = overridesFor(set, labels);
    return idx.length ? `overrides ${idx.join(',')}` : 'no overrides';
  }

  // overridesSection is, per Cluster of the set, the spec.clusterOverrides that
  // select it and the values they give it ($(cluster.…) replaced), over the template's.
  overridesSection(set, lanes) {
    const items = lanes.flatMap((l) => l.items).filter((i) => i.labels).sort((a, b) => a.cluster.localeCompare(b.cluster));
    return html`<section aria-labelledby="h-overrides"><h2 id="h-overrides">Cluster overrides</h2>
      <p class="meta">spec.clusterOverrides merged in order over spec.template.spec.values for the Clusters each selects.</p>
      <table><thead><tr><th>Cluster</th><th>Overrides</th><th>Values</th></tr></thead><tbody>
      ${items.map((i) => { const idx = overridesFor(set, i.labels); return html`<tr data-override-cluster=${i.cluster}>
        <td>${i.cluster}</td><td data-testid="override-indexes">${idx.length ? idx.join(', ') : 'none'}</td>
        <td>${idx.length ? html`<pre data-testid="override-values">${sortedJSON(overrideValues(set, idx, i.cluster, i.labels))}</pre>` : '—'}</td></tr>`; })}
      </tbody></table></section>`;
  }

  // promoteAction is what Promote would do now, and whether it may: acknowledge
  // the held mass removal, or approve the stage that waits; disabled (with why)
  // while the set is paused.
  promoteAction(set, halted, waiting) {
    const held = set.status?.heldRemovals || [];
    let action = null;
    if (held.length) action = { label: `Promote: acknowledge the removal of ${held.length} Release${held.length === 1 ? '' : 's'}`, held };
    else if (waiting && halted?.status !== 'True') action = { label: `Promote stage ${waiting.name}` };
    if (action && set.spec.paused) {
      action.disabled = `The ReleaseSet is paused: it writes no Release, so Promote waits until it is resumed (kubectl convoy releaseset resume ${set.metadata.name} -n ${set.metadata.namespace}).`;
    }
    return action;
  }

  // stageFigures are the lane's unavailable and baking Releases against the stage's
  // maxUnavailable and bakeTime, shown when the strategy sets them (or the status counts some).
  stageFigures(set, status) {
    const spec = specStage(set, status.name);
    const out = [];
    if (spec?.maxUnavailable !== undefined || status.unavailable) {
      out.push(html`<span data-testid="stage-unavailable">${status.unavailable || 0} unavailable (${maxUnavailable(spec, status.clusters).text})</span>`);
    }
    if (spec?.bakeTime || status.baking) {
      out.push(html`<span data-testid="stage-baking">${status.baking || 0} baking${spec?.bakeTime ? ` (bake ${shortDuration(parseDuration(spec.bakeTime))})` : ''}</span>`);
    }
    const timing = stageTiming(status, spec);
    this.counting ||= !!timing.pending;
    if (timing.text) out.push(html`<span data-testid="stage-timing" class=${timing.deadline === 'deadline passed' ? 'late' : ''}>${timing.text}</span>`);
    return out.length ? html`<p class="meta">${out.map((x, i) => html`${i ? ' · ' : ''}${x}`)}</p>` : nothing;
  }

  haltBanner(set, halted) {
    if (halted?.status !== 'True') return nothing;
    const held = set.status?.heldRemovals || [];
    return html`<div class="error" role="alert" data-testid="halted" data-reason=${halted.reason}>
      <p>Halted (${halted.reason}): ${halted.message}</p>
      ${held.length ? html`<p>Held removals (the Releases the set does not delete):</p>
        <ul data-testid="held-removals">${held.map((r) => html`<li>${r}</li>`)}</ul>` : nothing}
      <p data-testid="halt-help">${haltHelp[halted.reason] || 'Promote does not resume a halted rollout; a new revision starts over.'}</p></div>`;
  }

  render() {
    const key = `${this.namespace}/${this.name}`;
    const set = store.get('ReleaseSet', key);
    if (!set) return html`<p><a href="#/releasesets">Fleets</a></p><p role="alert">ReleaseSet ${key} does not exist (or was deleted).</p>`;
    const releases = store.list('Release').filter((r) => r.metadata.namespace === this.namespace &&
      (r.metadata.labels || {})['convoy.kumodo.io/release-set'] === this.name);
    const st = set.status || {};
    const halted = condition(set, 'Halted');
    const waiting = (st.stages || []).find((s) => s.phase === 'WaitingForApproval');
    const action = this.access?.promote ? this.promoteAction(set, halted, waiting) : null;
    const chart = set.spec.template.spec.chart || {};
    const sel = set.spec.clusterSelector;
    const source = sourceText(set);
    const overrides = set.spec.clusterOverrides || [];
    const lanes = this.lanes(set, releases);
    const promoted = this.promoted;
    this.counting = false;
    return html`
      <p class="crumbs"><a href="#/releasesets">Fleets</a> / ${this.namespace}</p>
      <h1>${set.metadata.name} <span class="badge" data-testid="revision">${shortRevision(st.revision) || 'no revision yet'}</span>
        ${source ? html`<span class="source" data-testid="source" title="status.source: what the set resolved from its template for this revision">${source}</span>` : nothing}</h1>
      <p class="meta">Chart ${chart.name} ${chart.version || ''} from ${chart.repository}; Clusters
        ${sel ? Object.entries(sel.matchLabels || {}).map(([k, v]) => `${k}=${v}`).concat((sel.matchExpressions || []).map((e) => `${e.key} ${e.operator} ${(e.values || []).join(',')}`)).join(', ') || 'none' : 'none'}</p>
      ${set.spec.paused ? html`<p class="notice" role="status" data-testid="paused">Paused (spec.paused): the set creates, updates and deletes no Release until it is resumed:
        <code>kubectl convoy releaseset resume ${set.metadata.name} -n ${set.metadata.namespace}</code></p>` : nothing}
      ${this.haltBanner(set, halted)}
      <div class="actions" role="toolbar" aria-label="Actions" data-access=${this.access ? 'loaded' : 'loading'}>
        ${action ? html`<button data-testid="promote" ?disabled=${this.busy || !!action.disabled} title=${action.disabled || ''} @click=${() => this.promote()}>${action.label}</button>
          ${action.disabled ? html`<span class="meta" data-testid="promote-why">${action.disabled}</span>`
            : action.held ? html`<span class="meta" data-testid="promote-why">Acknowledges the removal of ${action.held.join(', ')}; approves nothing else.</span>` : nothing}` : nothing}
      </div>
      ${promoted ? html`<p class="progress" role="status" data-testid="promoted">${promoted.acknowledged
        ? `Acknowledged the removal of ${promoted.acknowledged.length} Release${promoted.acknowledged.length === 1 ? '' : 's'}: ${promoted.acknowledged.join(', ')}.`
        : `Approved stage ${promoted.stage || '?'} at revision ${shortRevision(promoted.revision)}.`}</p>` : nothing}
      ${this.error ? html`<p class="error" role="alert">${this.error}</p>` : nothing}

      <section aria-labelledby="h-stages"><h2 id="h-stages">Stages</h2>
        <ol class="stages" aria-label="Stages">
          ${lanes.map((l) => html`<li class="lane stage phase-${l.status.phase || 'None'}" data-stage=${l.status.name}>
            <b>${l.status.name}</b> <span data-testid="phase">${l.status.phase || ''}</span>
            ${l.unknown ? html`<p class="meta">You may not list these Releases' Clusters.</p>` : html`<p class="meta">${this.approval(set, l.status.name)}${l.status.phase
              ? html` · ${l.status.updated || 0}/${l.status.clusters || 0} updated · <span data-testid="stage-ready">${l.status.ready || 0}/${l.status.clusters || 0} ready</span>` : nothing}</p>
              ${l.status.phase ? this.stageFigures(set, l.status) : nothing}`}
            <ul>${l.items.map((i) => html`<li class="chip set-state-${i.state}" data-cluster=${i.cluster} title=${i.release ? condition(i.release, 'Ready')?.message || '' : 'Its stage has not started.'}>
              ${i.release ? html`<a href=${releaseHref(i.release)}>${i.cluster || '(host)'}</a>` : html`${i.cluster}`}
              <span data-testid="state">${i.state === 'NotStarted' ? 'not started' : i.state}</span>
              ${overrides.length && i.labels ? html`<span class="meta" data-testid="overrides">${this.overridesText(set, i.labels)}</span>` : nothing}</li>`)}</ul>
          </li>`)}
        </ol>
      </section>

      ${overrides.length ? this.overridesSection(set, lanes) : nothing}

      <section aria-labelledby="h-conditions"><h2 id="h-conditions">Conditions</h2>
        ${(st.conditions || []).length === 0 ? html`<p>None yet: the controller has not reconciled this ReleaseSet.</p>` : html`
        <table><thead><tr><th>Type</th><th>Status</th><th>Reason</th><th>Message</th><th>Since</th></tr></thead><tbody>
        ${st.conditions.map((c) => html`<tr data-condition=${c.type}><td>${c.type}</td><td class="cond ${c.type === 'Halted' ? { True: 'False', False: 'True' }[c.status] || c.status : c.status}">${c.status}</td>
          <td data-testid="reason-${c.type}">${c.reason}</td><td>${c.message}</td><td>${age(c.lastTransitionTime)}</td></tr>`)}
        </tbody></table>`}
      </section>

      ${(st.skipped || []).length ? html`<section aria-labelledby="h-skipped"><h2 id="h-skipped">Skipped Clusters</h2>
        <table><thead><tr><th>Cluster</th><th>Reason</th><th>Message</th></tr></thead><tbody>
        ${st.skipped.map((s) => html`<tr data-skipped=${s.name}><td>${s.name}</td><td>${s.reason}</td><td>${s.message || ''}</td></tr>`)}
        </tbody></table></section>` : nothing}

      ${(set.approvals || []).length ? html`<section aria-labelledby="h-approvals"><h2 id="h-approvals">Approvals</h2>
        <ul>${set.approvals.map((a) => html`<li>Stage ${a.stage} at revision ${shortRevision(a.revision)}${a.approvedBy ? ` by ${a.approvedBy}` : ''}${a.approvedAt ? `, ${age(a.approvedAt)} ago` : ''}</li>`)}</ul>
      </section>` : nothing}`;
  }
}
customElements.define('releaseset-page', ReleaseSetPage);
