import './base.css';
import './agent.css';
