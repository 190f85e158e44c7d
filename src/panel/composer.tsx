import * as React from 'react';

import { AgentSession } from '../agent/session';

/**
 * The message box: Enter sends, Shift+Enter starts a new line; the cells in
 * focus as chips; Stop while a turn runs. The draft lives in the session, so
 * switching notebooks or a failed send loses nothing.
 */
export function Composer(props: {
  session: AgentSession;
  disabled: boolean;
  activeCellId: () => string | null;
  inputRef: React.RefObject<HTMLTextAreaElement>;
}): JSX.Element {
  const { session } = props;
  const [text, setText] = React.useState(session.draft);
  const busy = session.conversation.isBusy;
  const sending = session.isPending('send');

  React.useEffect(() => {
    // The session clears its draft once a message is sent.
    if (session.draft === '' && !sending) {
      setText('');
    }
  }, [session.draft, sending]);

  const send = () => {
    if (!text.trim() || busy || sending || props.disabled) {
      return;
    }
    void session.send(text, props.activeCellId());
  };

  const onKeyDown = (event: React.KeyboardEvent<HTMLTextAreaElement>) => {
    if (
      event.key === 'Enter' &&
      !event.shiftKey &&
      !event.nativeEvent.isComposing
    ) {
      event.preventDefault();
      send();
    }
  };

  return (
    <form
      className="jp-Loop-Composer"
      onSubmit={event => {
        event.preventDefault();
        send();
      }}
    >
      {session.focus.length > 0 && (
        <ul className="jp-Loop-FocusChips" aria-label="Cells in focus">
          {session.focus.map(cellId => {
            const at = session.proposals.position(cellId);
            const name = at > 0 ? `cell ${at}` : 'a deleted cell';
            return (
              <li key={cellId} className="jp-Loop-FocusChip">
                @{name}
                <button
                  type="button"
                  className="jp-Loop-FocusChip-remove"
                  aria-label={`Remove ${name} from focus`}
                  onClick={() => session.removeFocus(cellId)}
                >
                  ×
                </button>
              </li>
            );
          })}
        </ul>
      )}
      <textarea
        ref={props.inputRef}
        className="jp-Loop-Composer-input"
        aria-label="Message to the AI assistant"
        placeholder="Ask about this notebook… (@cell: the active cell, @cell3: the third)"
        rows={3}
        value={text}
        disabled={props.disabled}
        onChange={event => {
          setText(event.target.value);
          session.draft = event.target.value;
        }}
        onKeyDown={onKeyDown}
      />
      <div className="jp-Loop-Composer-actions">
        <button
          type="button"
          className="jp-Button jp-mod-styled jp-Loop-focus-active"
          title="Put the active cell in focus"
          aria-label="Ask about the active cell"
          disabled={props.disabled}
          onClick={() => {
            const id = props.activeCellId();
            if (id) {
              session.addFocus([id]);
            }
            props.inputRef.current?.focus();
          }}
        >
          @cell
        </button>
        <span className="jp-Loop-Composer-hint">
          Enter sends · Shift+Enter new line
        </span>
        {busy ? (
          <button
            type="button"
            className="jp-Button jp-mod-styled jp-mod-warn jp-Loop-stop"
            disabled={session.isPending('stop')}
            onClick={() => void session.stop()}
            aria-label="Stop the assistant"
          >
            Stop
          </button>
        ) : (
          <button
            type="submit"
            className="jp-Button jp-mod-styled jp-mod-accept jp-Loop-send"
            disabled={props.disabled || sending || !text.trim()}
            aria-label="Send the message"
          >
            Send
          </button>
        )}
      </div>
    </form>
  );
}
