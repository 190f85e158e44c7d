/**
 * Model Markdown is untrusted: an image in it would make the browser fetch a
 * remote address as soon as it is rendered (a beacon that can carry data out).
 * Images are shown as links instead; `data:` images (no request) stay images.
 * Code spans and fenced code are left as they are.
 */

/** Code (fenced or inline), which is shown as text and never fetched. */
const CODE = /(```[\s\S]*?(?:```|$)|~~~[\s\S]*?(?:~~~|$)|`[^`\n]*`)/;

/** `![alt](address "title")` */
const INLINE_IMAGE = /!\[([^\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+["'(][^)]*)?\s*\)/g;

/** `![alt][ref]` and `![alt]` (reference style). */
const REFERENCE_IMAGE = /!\[([^\]]*)\](?!\()(\[[^\]]*\])?/g;

/** HTML elements that fetch what they point at. */
const HTML_MEDIA =
  /<(img|image|source|video|audio|picture|input|track|embed|object|iframe)\b[^>]*>/gi;

const ATTRIBUTE =
  /\b(?:src|srcset|href|poster|data)\s*=\s*("([^"]*)"|'([^']*)'|([^\s>]+))/i;

const ALT = /\balt\s*=\s*("([^"]*)"|'([^']*)')/i;

function isInline(address: string): boolean {
  return /^data:/i.test(address.trim());
}

function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

function rewrite(text: string): string {
  return text
    .replace(INLINE_IMAGE, (whole, alt: string, address: string) =>
      isInline(address) ? whole : `[image: ${alt || address}](${address})`
    )
    .replace(
      REFERENCE_IMAGE,
      (_whole, alt: string, ref?: string) => `[image: ${alt}]${ref ?? ''}`
    )
    .replace(HTML_MEDIA, tag => {
      const found = ATTRIBUTE.exec(tag);
      const address = found ? (found[2] ?? found[3] ?? found[4] ?? '') : '';
      if (address && isInline(address) && /^<img\b/i.test(tag)) {
        return tag;
      }
      const alt = ALT.exec(tag);
      const label = (alt && (alt[2] ?? alt[3])) || address || 'media';
      return address
        ? `<a href="${escapeHtml(address)}">image: ${escapeHtml(label)}</a>`
        : '';
    });
}

/**
 * The Markdown with every remote image turned into a link.
 *
 * ```ts
 * withoutRemoteImages('![plot](https://x.test/a.png)');
 * // '[image: plot](https://x.test/a.png)'
 * ```
 */
export function withoutRemoteImages(markdown: string): string {
  return markdown
    .split(CODE)
    .map((part, index) => (index % 2 === 1 ? part : rewrite(part)))
    .join('');
}
