import * as React from 'react';

import { IJournalEntry } from '../payloads';

/** A journal entry's details in one line. */
export function detailsText(details: unknown): string {
  if (details === null || details === undefined) {
    return '';
  }
  if (typeof details !== 'object') {
    return String(details);
  }
  return Object.entries(details as { [key: string]: unknown })
    .filter(([, value]) => value !== null && value !== undefined)
    .map(
      ([key, value]) =>
        `${key}: ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`
    )
    .join(' · ');
}

/** Every action of the agent on a notebook, newest first (`GET agent/journal`). */
export function JournalTable(props: {
  entries: IJournalEntry[];
  displayName: (name: string | null | undefined) => string;
}): JSX.Element {
  const entries = props.entries.slice().reverse();
  if (entries.length === 0) {
    return <p>The assistant has not done anything on this notebook yet.</p>;
  }
  return (
    <div className="jp-Loop-Journal">
      <table>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Action</th>
            <th scope="col">By</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((entry, index) => (
            <tr key={index}>
              <td>{new Date(entry.at).toLocaleString()}</td>
              <td>{entry.action}</td>
              <td>{props.displayName(entry.by) || entry.by || ''}</td>
              <td className="jp-Loop-Journal-details">
                {detailsText(entry.details)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
