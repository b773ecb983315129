import { readFileSync } from 'node:fs';
import { type Hex, parseAbi } from 'viem';

/**
 * The vault and the development token as the service calls them. The ABI is written out here (viem then types
 * every call); `test/contracts.test.ts` holds it equal to what solc made of the Solidity in `contracts/src`, and
 * the bytecode for development deploys comes from `contracts/artifacts.json`, built by the contract engine.
 */
export const vaultAbi = parseAbi([
  'constructor(address token_, address sequencer_, uint256 forceWithdrawDelay_)',
  'function BALANCE_TAG() view returns (bytes32)',
  'function WITHDRAWAL_TAG() view returns (bytes32)',
  'function token() view returns (address)',
  'function sequencer() view returns (address)',
  'function forceWithdrawDelay() view returns (uint256)',
  'function reserve() view returns (uint256)',
  'function totalDeposited() view returns (uint256)',
  'function totalPaidOut() view returns (uint256)',
  'function totalClaimed() view returns (uint256)',
  'function totalRefunded() view returns (uint256)',
  'function lastBatch() view returns (uint64)',
  'function lastLogSize() view returns (uint64)',
  'function depositsAnchored() view returns (uint64)',
  'function lastAnchorAt() view returns (uint64)',
  'function lastBalanceRoot() view returns (bytes32)',
  'function lastLogRoot() view returns (bytes32)',
  'function frozen() view returns (bool)',
  'function withdrawalRoots(uint64 batch) view returns (bytes32)',
  'function withdrawalPaid(bytes32 withdrawalId) view returns (bool)',
  'function claimed(bytes32 account) view returns (bool)',
  'function depositCount() view returns (uint256)',
  'function depositAt(uint256 index) view returns (bytes32 account, address from, uint256 amount, bool refunded)',
  'function freezableAt() view returns (uint256)',
  'function deposit(uint256 amount, bytes32 didHash) returns (uint256 index)',
  'function anchor(uint64 batch, bytes32 balanceRoot, bytes32 logRoot, uint64 logSize, bytes32 withdrawalsRoot, uint64 depositsCovered)',
  'function heartbeat()',
  'function payout(bytes32 withdrawalId, address to, uint256 amount, uint64 batch, bytes32[] proof)',
  'function freeze()',
  'function claim(bytes32 account, address to, uint256 balance, bytes32[] proof)',
  'function refundDeposit(uint256 index)',
  'event Deposited(uint256 indexed index, bytes32 indexed account, address indexed from, uint256 amount)',
  'event Anchored(uint64 indexed batch, bytes32 balanceRoot, bytes32 logRoot, uint64 logSize, bytes32 withdrawalsRoot, uint64 depositsCovered)',
  'event Heartbeat(uint64 indexed lastBatch, uint256 at)',
  'event WithdrawalPaid(bytes32 indexed withdrawalId, address indexed to, uint256 amount, uint64 batch)',
  'event Frozen(uint64 lastBatch, uint256 at)',
  'event Claimed(bytes32 indexed account, address indexed to, uint256 amount)',
  'event DepositRefunded(uint256 indexed index, address indexed to, uint256 amount)',
  'error NotSequencer()',
  'error VaultFrozen()',
  'error NotFrozen()',
  'error InvalidAmount()',
  'error ZeroAddress()',
  'error BatchOutOfOrder(uint64 expected, uint64 given)',
  'error LogNotForward(uint64 last, uint64 given)',
  'error DepositsOutOfRange(uint64 given, uint256 min, uint256 max)',
  'error EmptyRoot()',
  'error UnknownBatch(uint64 batch)',
  'error AlreadyPaid(bytes32 withdrawalId)',
  'error InvalidProof()',
  'error AlreadyClaimed(bytes32 account)',
  'error TooEarly(uint256 freezableAt)',
  'error NotRefundable(uint256 index)',
  'error AlreadyRefunded(uint256 index)',
  'error TransferShortfall(uint256 expected, uint256 received)',
  'error ReentrancyGuardReentrantCall()',
  'error SafeERC20FailedOperation(address token)',
]);

/** The ERC-20 surface the service and a depositor use, plus the development token's mint. */
export const tokenAbi = parseAbi([
  'constructor(address owner_)',
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function decimals() view returns (uint8)',
  'function totalSupply() view returns (uint256)',
  'function balanceOf(address account) view returns (uint256)',
  'function allowance(address owner, address spender) view returns (uint256)',
  'function approve(address spender, uint256 value) returns (bool)',
  'function transfer(address to, uint256 value) returns (bool)',
  'function transferFrom(address from, address to, uint256 value) returns (bool)',
  'function mint(address to, uint256 amount)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event Approval(address indexed owner, address indexed spender, uint256 value)',
]);

export interface ContractArtifacts {
  compiler: unknown;
  sources_sha256: string;
  contracts: Record<'DevReserveToken' | 'SettlementVault', { abi: unknown[]; bytecode: Hex }>;
}

let loaded: ContractArtifacts | undefined;

/** The compiled contracts (read on first use: only a development deploy needs the bytecode). */
export function contractArtifacts(): ContractArtifacts {
  loaded ??= JSON.parse(readFileSync(new URL('../../contracts/artifacts.json', import.meta.url), 'utf8')) as ContractArtifacts;
  return loaded;
}
