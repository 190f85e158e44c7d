import * as React from 'react';

import { CompletionUsage } from '../completion/usage';
import { formatTokens, useSignal } from './hooks';

/**
 * One line at the foot of the panel: what inline completions cost on this
 * server since it started. Hidden until a completion was asked for.
 */
export function CompletionUsageLine(props: {
  usage: CompletionUsage;
}): JSX.Element | null {
  useSignal(props.usage.changed);
  const status = props.usage.status;
  if (!status?.configured) {
    return null;
  }
  const { requests, input_tokens, output_tokens, failures, cancelled } =
    status.usage;
  if (requests === 0 && failures === 0) {
    return null;
  }
  const parts = [
    `${requests} ${requests === 1 ? 'request' : 'requests'}`,
    `${formatTokens(input_tokens)} in · ${formatTokens(output_tokens)} out tokens`
  ];
  if (failures > 0) {
    parts.push(`${failures} failed`);
  }
  if (cancelled > 0) {
    parts.push(`${cancelled} cancelled`);
  }
  const title = [
    'Inline completions on this server since it started (all tabs and users):',
    `model requests ${requests}, input tokens ${input_tokens}, output tokens ${output_tokens},`,
    `failed ${failures}, cancelled by typing on ${cancelled}.`,
    status.model ? `Model: ${status.model}.` : '',
    status.usage.last_error ? `Last error: ${status.usage.last_error}` : ''
  ]
    .filter(Boolean)
    .join(' ');
  return (
    <footer className="jp-Loop-CompletionUsage" title={title}>
      <span className="jp-Loop-CompletionUsage-label">Inline completions:</span>{' '}
      <span className="jp-Loop-CompletionUsage-figures">
        {parts.join(' · ')}
      </span>
    </footer>
  );
}
