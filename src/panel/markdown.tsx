import { IRenderMimeRegistry, MimeModel } from '@jupyterlab/rendermime';
import * as React from 'react';

import { withoutRemoteImages } from './remoteimages';

/** While text streams, render at most this often (milliseconds). */
const STREAM_INTERVAL = 80;

/**
 * Markdown (and code in it) rendered by JupyterLab's own renderer, as
 * untrusted content, remote images shown as links (never fetched). Streaming text re-renders at most every
 * {@link STREAM_INTERVAL} ms, never twice at once.
 */
export function MarkdownBlock(props: {
  text: string;
  rendermime: IRenderMimeRegistry;
  className?: string;
}): JSX.Element {
  const host = React.useRef<HTMLDivElement>(null);
  const state = React.useRef<{
    renderer: ReturnType<IRenderMimeRegistry['createRenderer']> | null;
    busy: boolean;
    wanted: string;
    shown: string | null;
    timer: ReturnType<typeof setTimeout> | null;
  }>({ renderer: null, busy: false, wanted: '', shown: null, timer: null });

  const flush = React.useCallback(async (): Promise<void> => {
    const s = state.current;
    if (!s.renderer || s.busy || s.shown === s.wanted) {
      return;
    }
    s.busy = true;
    const text = s.wanted;
    try {
      await s.renderer.renderModel(
        new MimeModel({
          data: { 'text/markdown': withoutRemoteImages(text) },
          trusted: false
        })
      );
      s.shown = text;
    } catch {
      s.renderer.node.textContent = text;
      s.shown = text;
    } finally {
      s.busy = false;
    }
    if (s.wanted !== s.shown) {
      schedule();
    }
  }, []);

  const schedule = React.useCallback((): void => {
    const s = state.current;
    if (s.timer === null) {
      s.timer = setTimeout(() => {
        s.timer = null;
        void flush();
      }, STREAM_INTERVAL);
    }
  }, [flush]);

  React.useEffect(() => {
    const s = state.current;
    const renderer = props.rendermime.createRenderer('text/markdown');
    renderer.addClass('jp-Loop-Markdown-rendered');
    host.current?.appendChild(renderer.node);
    s.renderer = renderer;
    s.shown = null;
    void flush();
    return () => {
      if (s.timer !== null) {
        clearTimeout(s.timer);
        s.timer = null;
      }
      s.renderer = null;
      renderer.node.remove();
      renderer.dispose();
    };
  }, [props.rendermime]);

  React.useEffect(() => {
    const s = state.current;
    s.wanted = props.text;
    if (s.shown === null) {
      void flush();
    } else {
      schedule();
    }
  }, [props.text]);

  return (
    <div
      ref={host}
      className={`jp-Loop-Markdown ${props.className ?? ''}`}
      data-text-length={props.text.length}
    />
  );
}
