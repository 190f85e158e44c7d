import { IApprovalRequest } from '../payloads';

/**
 * Who asks to run cells, as the tab's card and the panel say it: the label the server put
 * on an outside client's request ("an MCP client of ada, calling itself …", the name only
 * its own claim), else the assistant (a turn of the panel). Rejected: "The assistant"
 * for every request, which told a person an MCP client's run was the panel's.
 */
export function askerOf(
  approval: Pick<IApprovalRequest, 'requested_by'>
): string {
  const label = (approval.requested_by ?? '').trim();
  if (!label) {
    return 'The assistant';
  }
  return label.charAt(0).toUpperCase() + label.slice(1);
}
