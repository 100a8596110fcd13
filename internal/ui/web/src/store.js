// The store: every object the server streams (/api/stream, Server-Sent
// Events), by kind and key. The page never polls: the server sends a snapshot,
// a "synced" message, then each change. After a reconnect the new snapshot
// replaces the old state once it is complete.

export const kinds = ['Release', 'ReleaseInventory', 'Render', 'Cluster', 'Event', 'ReleaseSet', 'Alert', 'Receiver'];

function empty() {
  return Object.fromEntries(kinds.map((k) => [k, new Map()]));
}

export class Store extends EventTarget {
  constructor() {
    super();
    this.objects = empty();
    this.pending = null;
    this.synced = false;
    this.connected = false;
    this.version = 0;
    this.scheduled = false;
  }

  connect(url = '/api/stream') {
    this.source = new EventSource(url);
    this.source.onopen = () => {
      this.connected = true;
      this.pending = empty();
      this.notify();
    };
    this.source.onerror = () => {
      this.connected = false;
      this.notify();
    };
    this.source.onmessage = (e) => this.apply(JSON.parse(e.data));
  }

  apply(m) {
    if (m.op === 'synced') {
      if (this.pending) {
        this.objects = this.pending;
        this.pending = null;
      }
      this.synced = true;
      this.notify();
      return;
    }
    const target = (this.pending || this.objects)[m.kind];
    if (!target) return;
    if (m.op === 'put') target.set(m.key, m.object);
    else target.delete(m.key);
    if (!this.pending) this.notify();
  }

  // notify batches changes into one update per animation frame, so that a
  // burst of 1,000 changes renders once.
  notify() {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      this.version++;
      this.dispatchEvent(new Event('change'));
    });
  }

  list(kind) {
    return [...this.objects[kind].values()];
  }

  get(kind, key) {
    return this.objects[kind].get(key);
  }
}

export const store = new Store();
