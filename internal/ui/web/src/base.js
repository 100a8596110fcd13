import { LitElement } from 'lit';
import { store } from './store.js';

// Light DOM everywhere: one stylesheet, and tests find elements by selector.
export class Base extends LitElement {
  createRenderRoot() { return this; }
}

// Live is a Base that renders again whenever the store changes (once per
// animation frame at most, see Store.notify).
export class Live extends Base {
  connectedCallback() {
    super.connectedCallback();
    this.onStore = () => this.requestUpdate();
    store.addEventListener('change', this.onStore);
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    store.removeEventListener('change', this.onStore);
  }
}
