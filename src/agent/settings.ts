/**
 * The agent panel's settings (schema/agent.json), read by the service and the
 * sessions it serves; empty values defer to the server.
 */

import { ApprovalPolicy } from '../payloads';

/** The panel's settings (schema/agent.json); empty values defer to the server. */
export interface IAgentSettings {
  /** The provider kind; '' for the server's. */
  provider: string;
  /** The model for new turns; '' for the server's default. */
  model: string;
  /** The approval policy for running cells; 'server' for the server's. */
  approvalPolicy: ApprovalPolicy | 'server';
  /** Model calls per turn at most; 0 for the server's budget. */
  maxSteps: number;
}

export const DEFAULT_SETTINGS: IAgentSettings = {
  provider: '',
  model: '',
  approvalPolicy: 'server',
  maxSteps: 0
};
