import { LitElement } from 'lit';

// Light DOM everywhere: one stylesheet, and tests find elements by selector.
export class Base extends LitElement {
  createRenderRoot() { return this; }
}
