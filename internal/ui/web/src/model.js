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
  return ref.replace(/^sha256:/, '').slice(0, 12);
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
