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
