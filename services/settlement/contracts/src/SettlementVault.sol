// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {MerkleProof} from "@openzeppelin/contracts/utils/cryptography/MerkleProof.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";

/// @title SettlementVault
/// @notice Holds the reserve behind an off-chain ledger. The ledger's single sequencer moves money off chain and
/// anchors its state here batch by batch: the root of every account's balance, the root of its receipt log, and
/// the root of the withdrawals it burned in that batch. While the sequencer is alive it pays those withdrawals.
/// If it stops anchoring (and stops sending heartbeats) for `forceWithdrawDelay`, anyone may freeze the vault;
/// from then on every account takes its balance out with a proof against the last anchored balance root, and
/// deposits the last anchor did not cover go back to whoever made them.
/// @dev Why nobody is paid twice across the freeze: a withdrawal can only be paid from the withdrawal root of an
/// anchored batch, and the balance root anchored with that same batch already has the withdrawal burned. A
/// withdrawal burned in a batch that was never anchored is never payable, and the claim then comes from an older
/// balance root that still holds it. Either way an account gets its balance exactly once.
/// Leaves follow OpenZeppelin's StandardMerkleTree (double keccak of abi.encode, sorted pairs), so the ledger
/// builds trees and proofs with the OpenZeppelin merkle-tree package (StandardMerkleTree).
contract SettlementVault is ReentrancyGuard {
    using SafeERC20 for IERC20;

    /// @notice Domain tag of a balance leaf: (tag, account, payout address, balance). The tag keeps a proof from one
    /// kind of tree from ever passing against the other kind's root. v2 added the payout address.
    bytes32 public constant BALANCE_TAG = keccak256("platform.settlement.balance.v2");
    /// @notice Domain tag of a withdrawal leaf: (tag, withdrawal id, recipient, amount).
    bytes32 public constant WITHDRAWAL_TAG = keccak256("platform.settlement.withdrawal.v1");

    /// @notice One deposit as recorded. Packed into two slots: account, then from (20) + amount (11) + refunded (1).
    struct DepositRecord {
        bytes32 account;
        address from;
        uint88 amount;
        bool refunded;
    }

    IERC20 public immutable token;
    address public immutable sequencer;
    /// @notice Seconds without an anchor or heartbeat after which anyone may freeze the vault.
    uint256 public immutable forceWithdrawDelay;

    /// @notice What the vault owes: deposits - payouts - claims - refunds. Tokens sent here without `deposit`
    /// are not counted, so a donation can neither be claimed by the ledger nor make the books look solvent.
    /// Every payment subtracts from it with checked arithmetic, so the vault never pays out more than was deposited.
    uint256 public reserve;
    uint256 public totalDeposited;
    uint256 public totalPaidOut;
    uint256 public totalClaimed;
    uint256 public totalRefunded;

    // These four are read and written together by anchor, so they share one slot (one SSTORE per anchor).
    uint64 public lastBatch;
    uint64 public lastLogSize;
    /// @notice Deposits with an index below this are in the last balance root (or were never creditable).
    uint64 public depositsAnchored;
    uint64 public lastAnchorAt;

    bytes32 public lastBalanceRoot;
    bytes32 public lastLogRoot;
    bool public frozen;

    /// @notice Root of the withdrawals burned in each anchored batch (absent when the batch burned none).
    mapping(uint64 => bytes32) public withdrawalRoots;
    mapping(bytes32 => bool) public withdrawalPaid;
    /// @notice Accounts that already claimed after the freeze.
    mapping(bytes32 => bool) public claimed;

    DepositRecord[] private _deposits;

    event Deposited(uint256 indexed index, bytes32 indexed account, address indexed from, uint256 amount);
    event Anchored(uint64 indexed batch, bytes32 balanceRoot, bytes32 logRoot, uint64 logSize, bytes32 withdrawalsRoot, uint64 depositsCovered);
    event Heartbeat(uint64 indexed lastBatch, uint256 at);
    event WithdrawalPaid(bytes32 indexed withdrawalId, address indexed to, uint256 amount, uint64 batch);
    event Frozen(uint64 lastBatch, uint256 at);
    event Claimed(bytes32 indexed account, address indexed to, uint256 amount);
    event DepositRefunded(uint256 indexed index, address indexed to, uint256 amount);

    error NotSequencer();
    error VaultFrozen();
    error NotFrozen();
    error InvalidAmount();
    error ZeroAddress();
    error BatchOutOfOrder(uint64 expected, uint64 given);
    error LogNotForward(uint64 last, uint64 given);
    error DepositsOutOfRange(uint64 given, uint256 min, uint256 max);
    error EmptyRoot();
    error UnknownBatch(uint64 batch);
    error AlreadyPaid(bytes32 withdrawalId);
    error InvalidProof();
    error AlreadyClaimed(bytes32 account);
    error TooEarly(uint256 freezableAt);
    error NotRefundable(uint256 index);
    error AlreadyRefunded(uint256 index);
    error TransferShortfall(uint256 expected, uint256 received);

    modifier onlySequencer() {
        if (msg.sender != sequencer) revert NotSequencer();
        _;
    }

    modifier whenNotFrozen() {
        if (frozen) revert VaultFrozen();
        _;
    }

    modifier whenFrozen() {
        if (!frozen) revert NotFrozen();
        _;
    }

    /// @param forceWithdrawDelay_ Seconds of sequencer silence before the vault can be frozen. Zero would let anyone
    /// freeze the vault at once; above 2^64 - 1 freezableAt() could overflow and the escape hatch would never open.
    constructor(IERC20 token_, address sequencer_, uint256 forceWithdrawDelay_) {
        if (address(token_) == address(0) || sequencer_ == address(0)) revert ZeroAddress();
        if (forceWithdrawDelay_ == 0 || forceWithdrawDelay_ > type(uint64).max) revert InvalidAmount();
        token = token_;
        sequencer = sequencer_;
        forceWithdrawDelay = forceWithdrawDelay_;
        // The clock starts at deployment: a sequencer that never anchors can be frozen out like one that stopped.
        lastAnchorAt = uint64(block.timestamp);
    }

    // ---------------------------------------------------------------- deposits

    /// @notice Moves `amount` tokens from the caller into the vault, credited (off chain) to the account `didHash`
    /// (keccak256 of the DID's UTF-8 bytes). The ledger credits it once an anchor covers its index; if the vault is
    /// frozen first, `refundDeposit` gives it back to the caller.
    /// @return index The deposit's index, which the ledger uses to credit it exactly once.
    function deposit(uint256 amount, bytes32 didHash) external nonReentrant whenNotFrozen returns (uint256 index) {
        // uint88 holds 3e26 units, far above any supply the ledger can represent, and lets a record fit two slots.
        if (amount == 0 || amount > type(uint88).max) revert InvalidAmount();
        // Measure what actually arrived: a fee-on-transfer token would otherwise leave the vault owing more than
        // it holds. Reentrancy is shut by nonReentrant, so the balance difference is this transfer's alone.
        uint256 before = token.balanceOf(address(this));
        token.safeTransferFrom(msg.sender, address(this), amount);
        uint256 received = token.balanceOf(address(this)) - before;
        if (received != amount) revert TransferShortfall(amount, received);

        index = _deposits.length;
        _deposits.push(DepositRecord({account: didHash, from: msg.sender, amount: uint88(amount), refunded: false}));
        reserve += amount;
        totalDeposited += amount;
        emit Deposited(index, didHash, msg.sender, amount);
    }

    function depositCount() external view returns (uint256) {
        return _deposits.length;
    }

    function depositAt(uint256 index) external view returns (bytes32 account, address from, uint256 amount, bool refunded) {
        DepositRecord storage record = _deposits[index];
        return (record.account, record.from, record.amount, record.refunded);
    }

    // ---------------------------------------------------------------- the sequencer

    /// @notice Anchors batch `batch` of the ledger. Everything only moves forward, so a stale or replayed anchor
    /// can never roll the roots (and with them the balances claimable after a freeze) back.
    /// @param logSize The receipt log's size after this batch; it must grow, as every batch appends receipts.
    /// @param withdrawalsRoot Root of the withdrawals burned in this batch; zero when there were none.
    /// @param depositsCovered Deposits with an index below this are included in `balanceRoot` (or were never
    /// creditable); later ones are not. It cannot go back (a covered deposit stays covered) nor past the deposits
    /// that exist.
    function anchor(uint64 batch, bytes32 balanceRoot, bytes32 logRoot, uint64 logSize, bytes32 withdrawalsRoot, uint64 depositsCovered)
        external
        onlySequencer
        whenNotFrozen
    {
        uint64 expected = lastBatch + 1;
        if (batch != expected) revert BatchOutOfOrder(expected, batch);
        if (logSize <= lastLogSize) revert LogNotForward(lastLogSize, logSize);
        uint256 count = _deposits.length;
        if (depositsCovered < depositsAnchored || depositsCovered > count) revert DepositsOutOfRange(depositsCovered, depositsAnchored, count);
        // A zero root would make every claim fail after a freeze: no ledger state hashes to zero.
        if (balanceRoot == bytes32(0) || logRoot == bytes32(0)) revert EmptyRoot();

        lastBatch = batch;
        lastLogSize = logSize;
        depositsAnchored = depositsCovered;
        lastAnchorAt = uint64(block.timestamp);
        lastBalanceRoot = balanceRoot;
        lastLogRoot = logRoot;
        if (withdrawalsRoot != bytes32(0)) withdrawalRoots[batch] = withdrawalsRoot;
        emit Anchored(batch, balanceRoot, logRoot, logSize, withdrawalsRoot, depositsCovered);
    }

    /// @notice Restarts the freeze clock without a new batch: an idle ledger has nothing to anchor but is alive.
    function heartbeat() external onlySequencer whenNotFrozen {
        lastAnchorAt = uint64(block.timestamp);
        emit Heartbeat(lastBatch, block.timestamp);
    }

    /// @notice Pays a withdrawal listed in the withdrawal root of anchored batch `batch`. Before the freeze only the
    /// sequencer pays (it decides the order); after it anyone may, which finishes withdrawals that were anchored
    /// but not yet paid. Either way the money can only go to the address committed in the leaf.
    function payout(bytes32 withdrawalId, address to, uint256 amount, uint64 batch, bytes32[] calldata proof) external nonReentrant {
        if (!frozen && msg.sender != sequencer) revert NotSequencer();
        // An unanchored batch has no root: its withdrawals are still in the last anchored balance root, which is
        // what makes them claimable instead after a freeze. Paying them too would pay twice.
        bytes32 root = withdrawalRoots[batch];
        if (root == bytes32(0)) revert UnknownBatch(batch);
        if (withdrawalPaid[withdrawalId]) revert AlreadyPaid(withdrawalId);
        if (to == address(0)) revert ZeroAddress();
        bytes32 leaf = keccak256(bytes.concat(keccak256(abi.encode(WITHDRAWAL_TAG, withdrawalId, to, amount))));
        if (!MerkleProof.verifyCalldata(proof, root, leaf)) revert InvalidProof();

        withdrawalPaid[withdrawalId] = true;
        reserve -= amount;
        totalPaidOut += amount;
        token.safeTransfer(to, amount);
        emit WithdrawalPaid(withdrawalId, to, amount, batch);
    }

    // ---------------------------------------------------------------- the escape hatch

    /// @notice When anyone may freeze the vault: the last sign of life plus the delay.
    function freezableAt() public view returns (uint256) {
        return uint256(lastAnchorAt) + forceWithdrawDelay;
    }

    /// @notice Freezes the vault once the sequencer has been silent for the delay. Anyone may call it: the users
    /// must be able to get out without the operator's help. Freezing is final.
    function freeze() external whenNotFrozen {
        uint256 opensAt = freezableAt();
        if (block.timestamp < opensAt) revert TooEarly(opensAt);
        frozen = true;
        emit Frozen(lastBatch, block.timestamp);
    }

    /// @notice After the freeze, pays `account` its whole balance in the last anchored balance root, once. Anyone
    /// may submit the proof (a relayer, a friend with gas): the leaf commits the payout address, so the money
    /// goes to `to` whoever sends it.
    function claim(bytes32 account, address to, uint256 balance, bytes32[] calldata proof) external nonReentrant whenFrozen {
        if (claimed[account]) revert AlreadyClaimed(account);
        // The ledger writes address(0) for an account that never bound a payout address; nothing could be sent.
        if (to == address(0)) revert ZeroAddress();
        bytes32 leaf = keccak256(bytes.concat(keccak256(abi.encode(BALANCE_TAG, account, to, balance))));
        if (!MerkleProof.verifyCalldata(proof, lastBalanceRoot, leaf)) revert InvalidProof();

        claimed[account] = true;
        reserve -= balance;
        totalClaimed += balance;
        token.safeTransfer(to, balance);
        emit Claimed(account, to, balance);
    }

    /// @notice After the freeze, returns a deposit that the last anchor did not cover to whoever made it: the ledger
    /// may have credited it, but no claimable balance includes it.
    function refundDeposit(uint256 index) external nonReentrant whenFrozen {
        if (index < depositsAnchored || index >= _deposits.length) revert NotRefundable(index);
        DepositRecord storage record = _deposits[index];
        if (record.refunded) revert AlreadyRefunded(index);

        record.refunded = true;
        uint256 amount = record.amount;
        reserve -= amount;
        totalRefunded += amount;
        address to = record.from;
        token.safeTransfer(to, amount);
        emit DepositRefunded(index, to, amount);
    }
}
