// What the page derives from the API's objects: the same words as the API
// (conditions, reasons), never a decision of its own.

export function condition(rel, type) {
  return (rel.status?.conditions || []).find((c) => c.type === type);
}

export function mode(rel) {
  return rel.spec?.syncPolicy?.automatic ? 'Automatic' : 'Manual';
}

// state is the Release's one-word state for counts and filters.
export function state(rel) {
  const applied = condition(rel, 'Applied');
  const healthy = condition(rel, 'Healthy');
  if (!applied) return 'Pending';
  if (applied.status === 'True') {
    if (healthy?.status === 'True') return 'Healthy';
    if (healthy?.reason === 'Degraded' || healthy?.reason === 'Missing') return 'Degraded';
    return 'Progressing';
  }
  if (['WaitingForSync', 'WaitingForClusterWave', 'WaitingForSyncWave', 'WaitingForHooks', 'Pinned'].includes(applied.reason)) return 'Waiting';
  return 'Failing';
}

export const states = ['Healthy', 'Progressing', 'Waiting', 'Degraded', 'Failing', 'Pending'];

export function shortRef(ref) {
  if (!ref) return '';
  return ref.replace(/^sha256:/, '').slice(0, 10);
}

// shortCommit is a Git commit's first 12 hex digits, as kubectl convoy shows it.
export function shortCommit(commit) {
  return (commit || '').slice(0, 12);
}

// gitRef names what spec.chart.git.ref selects: "branch main", "tag v1", "semver ^1",
// "commit 0123456789ab".
export function gitRef(ref = {}) {
  if (ref.branch) return `branch ${ref.branch}`;
  if (ref.tag) return `tag ${ref.tag}`;
  if (ref.semver) return `semver ${ref.semver}`;
  return `commit ${shortCommit(ref.commit)}`;
}

export function age(ts, now = Date.now()) {
  if (!ts) return '';
  const s = Math.max(0, Math.round((now - Date.parse(ts)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

export function key(obj) {
  return obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : obj.metadata.name;
}

// requests are the pending and handled /sync and force requests.
export function requests(rel) {
  const a = rel.metadata.annotations || {};
  const out = [];
  const one = (what, requested, handled) => {
    if (!requested) return;
    const pending = !handled || Date.parse(handled) < Date.parse(requested);
    out.push({ what, requested, handled, pending });
  };
  one('Sync', a['convoy.kumodo.io/sync-requested-at'], rel.status?.lastHandledSyncAt);
  one('Force sync', a['convoy.kumodo.io/sync-force-requested-at'], rel.status?.lastHandledForceSyncAt);
  return out;
}

export function describe(o) {
  return o.namespace ? `${o.kind} ${o.namespace}/${o.name}` : `${o.kind} ${o.name}`;
}

// shortRevision is a ReleaseSet's template revision as tables show it: its first
// 10 hex digits (as `kubectl get releasesets` and `kubectl convoy releaseset list`).
export function shortRevision(rev) {
  return rev ? rev.replace(/^sha256:/, '').slice(0, 10) : '';
}

// rolloutStage is where a ReleaseSet's rollout stands, as `kubectl get
// releasesets` shows it: "canary (Progressing)" for the first stage that is not
// Complete, "Complete" when every stage is, '' before the controller wrote stages.
export function rolloutStage(set) {
  const stages = set.status?.stages || [];
  const s = stages.find((x) => x.phase !== 'Complete');
  if (s) return { text: `${s.name} (${s.phase})`, phase: s.phase };
  return stages.length ? { text: 'Complete', phase: 'Complete' } : null;
}

// setReleaseState is where a ReleaseSet's Release stands at the set's revision
// (the same words as `kubectl convoy releaseset status`): Outdated (an earlier
// revision), Updating, Ready (observed and Ready True) or Failed (its rollout of
// the current render Failed or RolledBack).
export function setReleaseState(rel, revision) {
  const rev = (rel.metadata.annotations || {})['convoy.kumodo.io/release-set-revision'];
  if (!revision || rev !== revision) return 'Outdated';
  if ((rel.metadata.generation || 0) !== (rel.status?.observedGeneration || 0)) return 'Updating';
  const ro = rel.status?.rollout;
  if (ro && (ro.phase === 'Failed' || ro.phase === 'RolledBack') && ro.renderRef === rel.status?.render?.ref) return 'Failed';
  if (condition(rel, 'Ready')?.status === 'True') return 'Ready';
  return 'Updating';
}

// matches says whether a label selector (matchLabels, matchExpressions) selects
// labels, as Kubernetes evaluates it; an absent selector selects everything.
export function matches(selector, labels = {}) {
  if (!selector) return true;
  for (const [k, v] of Object.entries(selector.matchLabels || {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions || []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    switch (e.operator) {
      case 'In': if (!has || !(e.values || []).includes(labels[e.key])) return false; break;
      case 'NotIn': if (has && (e.values || []).includes(labels[e.key])) return false; break;
      case 'Exists': if (!has) return false; break;
      case 'DoesNotExist': if (has) return false; break;
      default: return false;
    }
  }
  return true;
}

// stageOf is the name of the stage of spec.strategy that takes a Cluster with
// these labels, by the rule the API documents: the first stage whose
// clusterSelector matches, a stage without one takes all the rest, and what no
// stage takes is in the implicit stage "rest". It only places Releases in lanes;
// the controller decides the rollout.
export function stageOf(set, labels) {
  for (const s of set.spec.strategy?.stages || []) {
    if (matches(s.clusterSelector, labels)) return s.name;
  }
  return 'rest';
}

// selects is spec.clusterSelector of a ReleaseSet: empty or absent selects none.
export function selects(set, labels) {
  const sel = set.spec.clusterSelector;
  if (!sel || (Object.keys(sel.matchLabels || {}).length === 0 && (sel.matchExpressions || []).length === 0)) return false;
  return matches(sel, labels);
}

// sourceText is what a ReleaseSet resolved from its template for the revision
// (status.source), as `kubectl convoy releaseset status` shows it beside the
// revision: "chart 6.7.1, commit 0123456789ab, values 4f1c2d3e4f"; '' without.
export function sourceText(set) {
  const src = set.status?.source;
  if (!src) return '';
  const parts = [];
  if (src.chartVersion) parts.push(`chart ${src.chartVersion}`);
  if (src.commit) parts.push(`commit ${shortCommit(src.commit)}`);
  if (src.valuesDigest) parts.push(`values ${shortRef(src.valuesDigest)}`);
  return parts.join(', ');
}

// parseDuration reads a Go duration as the API writes it ("1h0m0s", "90s") into ms.
export function parseDuration(d) {
  if (!d) return 0;
  const unit = { h: 3600e3, m: 60e3, s: 1e3, ms: 1, us: 1e-3, 'µs': 1e-3, ns: 1e-6 };
  let ms = 0;
  for (const [, n, u] of String(d).matchAll(/([0-9.]+)(h|ms|us|µs|ns|m|s)/g)) ms += parseFloat(n) * unit[u];
  return ms;
}

// shortDuration is ms as people write it (and as kubectl convoy prints it): 10m,
// 1h30m, 3m12s; a duration of an hour or more without its seconds.
export function shortDuration(ms) {
  let s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600); s -= h * 3600;
  const m = Math.floor(s / 60); s -= m * 60;
  if (h) return `${h}h${m ? `${m}m` : ''}`;
  if (m) return `${m}m${s ? `${s}s` : ''}`;
  return `${s}s`;
}

// specStage is the stage of spec.strategy named name (undefined for "rest").
export function specStage(set, name) {
  return (set.spec.strategy?.stages || []).find((s) => s.name === name);
}

// maxUnavailable is how many of a stage's Releases maxUnavailable lets be
// unavailable: a number, or a percentage of the stage's Clusters rounded down; 0 unset.
export function maxUnavailable(spec, clusters) {
  const v = spec?.maxUnavailable;
  if (v === undefined || v === null) return { n: 0, text: 'max 0' };
  if (typeof v === 'string' && v.endsWith('%')) {
    const n = Math.floor((parseInt(v, 10) * (clusters || 0)) / 100);
    return { n, text: `max ${v} = ${n}` };
  }
  return { n: Number(v), text: `max ${v}` };
}

// stageTiming says when a stage started and how long its progressDeadline
// (startedAt + progressDeadline) leaves until it completes: "started 5m ago,
// deadline in 3m12s", "deadline passed", "completed 2m ago"; '' before it started.
export function stageTiming(status, spec, now = Date.now()) {
  if (!status.startedAt) return { text: '', deadline: '' };
  const started = `started ${age(status.startedAt, now)} ago`;
  if (status.completedAt) return { text: `${started}, completed ${age(status.completedAt, now)} ago`, deadline: '' };
  if (!spec?.progressDeadline) return { text: started, deadline: '' };
  const left = Date.parse(status.startedAt) + parseDuration(spec.progressDeadline) - now;
  const deadline = left <= 0 ? 'deadline passed' : `deadline in ${shortDuration(Math.max(left, 1000))}`;
  return { text: `${started}, ${deadline}`, deadline, pending: left > 0 };
}

// overridesFor is the indexes of spec.clusterOverrides whose clusterSelector
// selects a Cluster with these labels ({} selects every Cluster of the set).
export function overridesFor(set, labels) {
  const out = [];
  (set.spec.clusterOverrides || []).forEach((o, i) => {
    if (o.clusterSelector && matches(o.clusterSelector, labels)) out.push(i);
  });
  return out;
}

// mergeMaps is Helm's loader.MergeMaps: maps merge, anything else is replaced.
export function mergeMaps(a, b) {
  const out = { ...a };
  for (const [k, v] of Object.entries(b || {})) {
    const isMap = (x) => x && typeof x === 'object' && !Array.isArray(x);
    out[k] = isMap(v) && isMap(out[k]) ? mergeMaps(out[k], v) : v;
  }
  return out;
}

// substituteCluster replaces $(cluster.name) and $(cluster.labels['<key>']) in the
// string values of v, and $$( by a literal $( — the grammar of the controller's
// package clustervars, which the API server validates (so no malformed reference
// reaches the page).
export function substituteCluster(v, name, labels = {}) {
  if (typeof v === 'string') {
    return v.replace(/\$\$\(|\$\(cluster\.name\)|\$\(cluster\.labels\['([^']*)'\]\)/g, (m, key) => {
      if (m === '$$(') return '$(';
      return m === '$(cluster.name)' ? name : labels[key] ?? '';
    });
  }
  if (Array.isArray(v)) return v.map((x) => substituteCluster(x, name, labels));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, substituteCluster(x, name, labels)]));
  return v;
}

// overrideValues is the values the overrides idx give a Cluster, merged in order,
// with the $(cluster.…) variables replaced; the template's values are not included.
export function overrideValues(set, idx, name, labels) {
  let merged = {};
  for (const i of idx) merged = mergeMaps(merged, set.spec.clusterOverrides[i].values || {});
  return substituteCluster(merged, name, labels);
}

// sortedJSON is v as indented JSON with its keys sorted, to read and to compare.
export function sortedJSON(v) {
  const sort = (x) => (Array.isArray(x) ? x.map(sort)
    : x && typeof x === 'object' ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, sort(x[k])])) : x);
  return JSON.stringify(sort(v), null, 2);
}

// eventTime is when a core/v1 Event last happened (an events.k8s.io/v1 recorder
// writes eventTime and series; core/v1 writers lastTimestamp).
export function eventTime(e) {
  const times = [e.series?.lastObservedTime, e.lastTimestamp, e.eventTime, e.metadata.creationTimestamp].filter(Boolean);
  return times.reduce((a, b) => (Date.parse(b) > Date.parse(a) ? b : a), times[0]);
}

// eventCount is how many times an Event happened: its count or its series' count, at least 1.
export function eventCount(e) {
  return Math.max(1, e.count || 0, e.series?.count || 0);
}

// deliveryFailures are an Alert's failed delivery attempts that the cluster still
// keeps as its Warning Events (one per attempt), as `kubectl convoy alert list`
// counts them: { count, reason, message, time } of the latest.
export function deliveryFailures(alert, events) {
  const out = { count: 0, reason: '', message: '', time: '' };
  for (const e of events) {
    const o = e.involvedObject || {};
    if (o.kind !== 'Alert' || e.type !== 'Warning' || o.namespace !== alert.metadata.namespace || o.name !== alert.metadata.name) continue;
    out.count += eventCount(e);
    const t = eventTime(e);
    if (!out.time || Date.parse(t) > Date.parse(out.time)) Object.assign(out, { reason: e.reason, message: e.message, time: t });
  }
  return out;
}

// alertSelects says whether an Alert sends the events of an object (a Release or
// ReleaseSet): the same namespace, and its selector (empty or absent: all) selects
// the object's labels.
export function alertSelects(alert, obj) {
  return alert.metadata.namespace === obj.metadata.namespace && matches(alert.spec.selector, obj.metadata.labels || {});
}

// delivered says whether a delivery's result is the provider's 2xx answer ("200 OK").
export function delivered(result) {
  return /^2\d\d( |$)/.test(result || '');
}
