import { withoutRemoteImages } from '../remoteimages';

describe('withoutRemoteImages', () => {
  it('turns Markdown images into links', () => {
    expect(withoutRemoteImages('See ![plot](https://x.test/a.png "t").')).toBe(
      'See [image: plot](https://x.test/a.png).'
    );
    expect(withoutRemoteImages('![a][r]\n\n[r]: https://x.test/b.png')).toBe(
      '[image: a][r]\n\n[r]: https://x.test/b.png'
    );
    expect(withoutRemoteImages('![](//x.test/c.png)')).toBe(
      '[image: //x.test/c.png](//x.test/c.png)'
    );
  });

  it('turns HTML images and media into links', () => {
    expect(
      withoutRemoteImages('<img src="https://x.test/?q=secret" alt="chart">')
    ).toBe('<a href="https://x.test/?q=secret">image: chart</a>');
    expect(withoutRemoteImages("<IMG SRC='http://x.test/p'>")).toBe(
      '<a href="http://x.test/p">image: http://x.test/p</a>'
    );
    expect(withoutRemoteImages('<video poster=http://x.test/v.jpg>')).toBe(
      '<a href="http://x.test/v.jpg">image: http://x.test/v.jpg</a>'
    );
  });

  it('keeps inline data images, code and plain links', () => {
    const kept = [
      '![dot](data:image/png;base64,iVBORw0KGgo=)',
      '`![x](https://x.test/in-code.png)`',
      '```\n<img src="https://x.test/fenced.png">\n```',
      '[a link](https://x.test/page)'
    ];
    for (const text of kept) {
      expect(withoutRemoteImages(text)).toBe(text);
    }
  });
});
