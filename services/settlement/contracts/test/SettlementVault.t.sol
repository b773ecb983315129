// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Test, console, stdError} from "forge-std/Test.sol";
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";
import {DevReserveToken} from "../src/DevReserveToken.sol";
import {SettlementVault} from "../src/SettlementVault.sol";

/// A token that burns 1% (at least one unit) of every transfer: the vault must refuse it rather than owe more
/// than it holds.
contract FeeOnTransferToken is ERC20 {
    constructor() ERC20("Fee", "FEE") {}

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    function _update(address from, address to, uint256 value) internal override {
        if (from == address(0) || to == address(0) || value == 0) return super._update(from, to, value);
        uint256 fee = value / 100 + 1;
        if (fee > value) fee = value;
        super._update(from, to, value - fee);
        super._update(from, address(0), fee);
    }
}

/// A token that calls back into a target during a transfer, to prove nonReentrant holds on the paths that move
/// tokens. The callback's revert is bubbled up so the test sees the guard's error.
contract ReentrantToken is ERC20 {
    address private _target;
    bytes private _data;

    constructor() ERC20("Reentrant", "RE") {}

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    function arm(address target, bytes calldata data) external {
        _target = target;
        _data = data;
    }

    function _update(address from, address to, uint256 value) internal override {
        super._update(from, to, value);
        if (_data.length == 0 || from == address(0) || to == address(0)) return;
        bytes memory data = _data;
        delete _data;
        (bool ok, bytes memory returned) = _target.call(data);
        if (!ok) {
            assembly {
                revert(add(returned, 32), mload(returned))
            }
        }
    }
}

/// Builders for small trees with OpenZeppelin's hashing (sorted pairs, double-hashed leaves), shared by the suites.
abstract contract VaultFixture is Test {
    bytes32 internal constant BALANCE_TAG = keccak256("platform.settlement.balance.v2");
    bytes32 internal constant WITHDRAWAL_TAG = keccak256("platform.settlement.withdrawal.v1");
    uint256 internal constant DELAY = 3 days;
    uint256 internal constant START = 1_767_225_600; // 2026-01-01T00:00:00Z

    DevReserveToken internal token;
    SettlementVault internal vault;
    address internal sequencer = makeAddr("sequencer");
    address internal alice = makeAddr("alice");
    address internal bob = makeAddr("bob");
    address internal carol = makeAddr("carol");
    address internal stranger = makeAddr("stranger");
    bytes32 internal aliceAccount = keccak256("did:platform:alice:0123456789abcdef");
    bytes32 internal bobAccount = keccak256("did:platform:bob:fedcba9876543210");
    bytes32 internal carolAccount = keccak256("did:platform:carol:00112233445566ff");

    function setUp() public virtual {
        vm.warp(START);
        token = new DevReserveToken(address(this));
        vault = new SettlementVault(token, sequencer, DELAY);
        vm.label(address(vault), "vault");
        vm.label(address(token), "pUSD");
    }

    // ---------------------------------------------------------------- leaves and trees

    function balanceLeaf(bytes32 account, address to, uint256 balance) internal pure returns (bytes32) {
        return keccak256(bytes.concat(keccak256(abi.encode(BALANCE_TAG, account, to, balance))));
    }

    function withdrawalLeaf(bytes32 id, address to, uint256 amount) internal pure returns (bytes32) {
        return keccak256(bytes.concat(keccak256(abi.encode(WITHDRAWAL_TAG, id, to, amount))));
    }

    function hashPair(bytes32 a, bytes32 b) internal pure returns (bytes32) {
        return a < b ? keccak256(abi.encode(a, b)) : keccak256(abi.encode(b, a));
    }

    /// Pairs neighbours level by level; an odd last node moves up unchanged (no sibling, so no proof step). Any tree
    /// with sorted-pair hashing verifies with MerkleProof, whatever its shape.
    function merkleRoot(bytes32[] memory leaves) internal pure returns (bytes32) {
        require(leaves.length > 0, "empty tree");
        bytes32[] memory level = copy(leaves);
        uint256 n = level.length;
        while (n > 1) {
            n = nextLevel(level, n);
        }
        return level[0];
    }

    function merkleProof(bytes32[] memory leaves, uint256 index) internal pure returns (bytes32[] memory proof) {
        require(index < leaves.length, "no such leaf");
        bytes32[] memory level = copy(leaves);
        proof = new bytes32[](256);
        uint256 length;
        uint256 n = level.length;
        while (n > 1) {
            uint256 sibling = index ^ 1;
            if (sibling < n) proof[length++] = level[sibling];
            n = nextLevel(level, n);
            index /= 2;
        }
        assembly {
            mstore(proof, length)
        }
    }

    function nextLevel(bytes32[] memory level, uint256 n) private pure returns (uint256) {
        for (uint256 i = 0; i < n / 2; i++) {
            level[i] = hashPair(level[2 * i], level[2 * i + 1]);
        }
        if (n % 2 == 1) level[n / 2] = level[n - 1];
        return (n + 1) / 2;
    }

    function copy(bytes32[] memory items) private pure returns (bytes32[] memory out) {
        out = new bytes32[](items.length);
        for (uint256 i = 0; i < items.length; i++) {
            out[i] = items[i];
        }
    }

    function leaves1(bytes32 a) internal pure returns (bytes32[] memory out) {
        out = new bytes32[](1);
        out[0] = a;
    }

    function leaves2(bytes32 a, bytes32 b) internal pure returns (bytes32[] memory out) {
        out = new bytes32[](2);
        (out[0], out[1]) = (a, b);
    }

    function leaves3(bytes32 a, bytes32 b, bytes32 c) internal pure returns (bytes32[] memory out) {
        out = new bytes32[](3);
        (out[0], out[1], out[2]) = (a, b, c);
    }

    // ---------------------------------------------------------------- actions

    function depositFrom(address from, uint256 amount, bytes32 account) internal returns (uint256 index) {
        token.mint(from, amount);
        vm.startPrank(from);
        token.approve(address(vault), amount);
        index = vault.deposit(amount, account);
        vm.stopPrank();
    }

    /// Anchors the next batch with a log that grows by ten receipts per batch.
    function anchorNext(bytes32 balanceRoot, bytes32 withdrawalsRoot, uint64 depositsCovered) internal returns (uint64 batch) {
        batch = vault.lastBatch() + 1;
        uint64 logSize = vault.lastLogSize() + 10;
        bytes32 logRoot = keccak256(abi.encode("log", batch));
        vm.prank(sequencer);
        vault.anchor(batch, balanceRoot, logRoot, logSize, withdrawalsRoot, depositsCovered);
    }

    function freezeNow() internal {
        vm.warp(vault.freezableAt());
        vault.freeze();
    }

    /// The books always balance, and the vault always holds at least what it owes.
    function assertBooks() internal view {
        assertEq(
            vault.reserve(), vault.totalDeposited() - vault.totalPaidOut() - vault.totalClaimed() - vault.totalRefunded(), "reserve = in - out"
        );
        assertGe(token.balanceOf(address(vault)), vault.reserve(), "the vault holds what it owes");
    }
}

contract SettlementVaultTest is VaultFixture {
    // ================================================================ construction

    function test_constructor_setsImmutablesAndStartsTheClock() public view {
        assertEq(address(vault.token()), address(token));
        assertEq(vault.sequencer(), sequencer);
        assertEq(vault.forceWithdrawDelay(), DELAY);
        assertEq(vault.lastAnchorAt(), START, "the clock starts at deployment");
        assertEq(vault.freezableAt(), START + DELAY);
        assertEq(vault.lastBatch(), 0);
        assertEq(vault.reserve(), 0);
        assertEq(vault.depositCount(), 0);
        assertFalse(vault.frozen());
    }

    function test_constructor_refusesZeroAddressesAndBadDelays() public {
        vm.expectRevert(SettlementVault.ZeroAddress.selector);
        new SettlementVault(IERC20(address(0)), sequencer, DELAY);
        vm.expectRevert(SettlementVault.ZeroAddress.selector);
        new SettlementVault(token, address(0), DELAY);
        vm.expectRevert(SettlementVault.InvalidAmount.selector);
        new SettlementVault(token, sequencer, 0);
        // A delay so large that freezableAt() would overflow would close the escape hatch for good.
        vm.expectRevert(SettlementVault.InvalidAmount.selector);
        new SettlementVault(token, sequencer, uint256(type(uint64).max) + 1);
    }

    function test_tags_areTheDocumentedHashes() public view {
        assertEq(vault.BALANCE_TAG(), keccak256("platform.settlement.balance.v2"));
        assertEq(vault.WITHDRAWAL_TAG(), keccak256("platform.settlement.withdrawal.v1"));
    }

    /// The anchor's four counters share one slot and a deposit record takes two; a reordering of the state
    /// variables would silently cost every anchor and deposit an extra SSTORE.
    function test_storageLayout_packsAnchorStateAndDepositRecords() public {
        depositFrom(alice, 5_000_000, aliceAccount);
        anchorNext(bytes32(uint256(1)), bytes32(0), 1);
        uint256 anchorSlot = 5;
        bytes32 packed = vm.load(address(vault), bytes32(anchorSlot));
        assertEq(uint256(packed), uint256(1) | (uint256(10) << 64) | (uint256(1) << 128) | (START << 192));

        uint256 depositsSlot = 12;
        assertEq(uint256(vm.load(address(vault), bytes32(depositsSlot))), 1, "array length");
        uint256 first = uint256(keccak256(abi.encode(depositsSlot)));
        assertEq(vm.load(address(vault), bytes32(first)), aliceAccount);
        assertEq(uint256(vm.load(address(vault), bytes32(first + 1))), uint256(uint160(alice)) | (uint256(5_000_000) << 160));
    }

    // ================================================================ deposit

    function test_deposit_recordsEmitsAndGrowsReserve() public {
        token.mint(alice, 7_000_000);
        vm.startPrank(alice);
        token.approve(address(vault), 7_000_000);
        vm.expectEmit(true, true, true, true, address(vault));
        emit SettlementVault.Deposited(0, aliceAccount, alice, 5_000_000);
        uint256 first = vault.deposit(5_000_000, aliceAccount);
        vm.expectEmit(true, true, true, true, address(vault));
        emit SettlementVault.Deposited(1, bobAccount, alice, 2_000_000);
        uint256 second = vault.deposit(2_000_000, bobAccount);
        vm.stopPrank();

        assertEq(first, 0);
        assertEq(second, 1);
        assertEq(vault.depositCount(), 2);
        (bytes32 account, address from, uint256 amount, bool refunded) = vault.depositAt(1);
        assertEq(account, bobAccount, "deposits may credit someone else's account");
        assertEq(from, alice);
        assertEq(amount, 2_000_000);
        assertFalse(refunded);
        assertEq(vault.reserve(), 7_000_000);
        assertEq(vault.totalDeposited(), 7_000_000);
        assertEq(token.balanceOf(address(vault)), 7_000_000);
        assertEq(token.balanceOf(alice), 0);
        assertBooks();
    }

    function test_deposit_refusesZeroAmount() public {
        vm.prank(alice);
        vm.expectRevert(SettlementVault.InvalidAmount.selector);
        vault.deposit(0, aliceAccount);
    }

    function test_deposit_refusesAmountAboveUint88() public {
        uint256 tooMuch = uint256(type(uint88).max) + 1;
        token.mint(alice, tooMuch);
        vm.startPrank(alice);
        token.approve(address(vault), tooMuch);
        vm.expectRevert(SettlementVault.InvalidAmount.selector);
        vault.deposit(tooMuch, aliceAccount);
        vm.stopPrank();
    }

    function test_deposit_acceptsUint88Max() public {
        depositFrom(alice, type(uint88).max, aliceAccount);
        (,, uint256 amount,) = vault.depositAt(0);
        assertEq(amount, type(uint88).max);
        assertEq(vault.reserve(), type(uint88).max);
    }

    function test_deposit_refusesFeeOnTransferToken() public {
        FeeOnTransferToken fee = new FeeOnTransferToken();
        SettlementVault feeVault = new SettlementVault(fee, sequencer, DELAY);
        fee.mint(alice, 1_000_000);
        vm.startPrank(alice);
        fee.approve(address(feeVault), 1_000_000);
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.TransferShortfall.selector, 1_000_000, 989_999));
        feeVault.deposit(1_000_000, aliceAccount);
        vm.stopPrank();
        assertEq(feeVault.depositCount(), 0);
        assertEq(feeVault.reserve(), 0);
    }

    function test_deposit_withoutAllowanceReverts() public {
        token.mint(alice, 1_000_000);
        vm.prank(alice);
        vm.expectRevert();
        vault.deposit(1_000_000, aliceAccount);
        assertEq(vault.depositCount(), 0);
    }

    function test_deposit_reentryRefused() public {
        ReentrantToken reentrant = new ReentrantToken();
        SettlementVault reentrantVault = new SettlementVault(reentrant, sequencer, DELAY);
        reentrant.mint(alice, 2_000_000);
        reentrant.mint(address(reentrant), 1_000_000);
        vm.prank(address(reentrant));
        reentrant.approve(address(reentrantVault), 1_000_000);
        // While the vault pulls alice's tokens, the token deposits again into the same vault.
        reentrant.arm(address(reentrantVault), abi.encodeCall(SettlementVault.deposit, (1_000_000, bobAccount)));
        vm.startPrank(alice);
        reentrant.approve(address(reentrantVault), 2_000_000);
        vm.expectRevert(ReentrancyGuard.ReentrancyGuardReentrantCall.selector);
        reentrantVault.deposit(2_000_000, aliceAccount);
        vm.stopPrank();
    }

    function test_donation_isNotCountedInReserve() public {
        depositFrom(alice, 3_000_000, aliceAccount);
        token.mint(address(vault), 9_000_000);
        assertEq(vault.reserve(), 3_000_000, "tokens sent without deposit are not owed to anyone");
        assertEq(vault.totalDeposited(), 3_000_000);
        assertEq(token.balanceOf(address(vault)), 12_000_000);
        assertBooks();
    }

    function test_depositAt_outOfRangeReverts() public {
        vm.expectRevert(stdError.indexOOBError);
        vault.depositAt(0);
    }

    function testFuzz_deposit(uint88 amount, bytes32 account, address from) public {
        vm.assume(from != address(0) && from != address(vault));
        amount = uint88(bound(amount, 1, type(uint88).max));
        uint256 index = depositFrom(from, amount, account);
        assertEq(index, 0);
        (bytes32 recordedAccount, address recordedFrom, uint256 recordedAmount, bool refunded) = vault.depositAt(0);
        assertEq(recordedAccount, account);
        assertEq(recordedFrom, from);
        assertEq(recordedAmount, amount);
        assertFalse(refunded);
        assertEq(vault.reserve(), amount);
        assertEq(token.balanceOf(address(vault)), amount);
        assertBooks();
    }

    // ================================================================ anchor

    function test_anchor_storesRootsAndEmits() public {
        depositFrom(alice, 1_000_000, aliceAccount);
        depositFrom(bob, 2_000_000, bobAccount);
        bytes32 balanceRoot = keccak256("balances 1");
        bytes32 logRoot = keccak256("log 1");
        bytes32 withdrawalsRoot = keccak256("withdrawals 1");
        vm.warp(START + 60);
        vm.expectEmit(true, true, true, true, address(vault));
        emit SettlementVault.Anchored(1, balanceRoot, logRoot, 42, withdrawalsRoot, 1);
        vm.prank(sequencer);
        vault.anchor(1, balanceRoot, logRoot, 42, withdrawalsRoot, 1);

        assertEq(vault.lastBatch(), 1);
        assertEq(vault.lastBalanceRoot(), balanceRoot);
        assertEq(vault.lastLogRoot(), logRoot);
        assertEq(vault.lastLogSize(), 42);
        assertEq(vault.depositsAnchored(), 1);
        assertEq(vault.lastAnchorAt(), START + 60);
        assertEq(vault.withdrawalRoots(1), withdrawalsRoot);
        assertEq(vault.freezableAt(), START + 60 + DELAY);
    }

    function test_anchor_zeroWithdrawalsRootStoresNone() public {
        anchorNext(keccak256("b1"), bytes32(0), 0);
        assertEq(vault.withdrawalRoots(1), bytes32(0));
        assertEq(vault.lastBatch(), 1);
    }

    function test_anchor_bySomeoneElseRefused() public {
        bytes32 root = keccak256("root");
        vm.prank(stranger);
        vm.expectRevert(SettlementVault.NotSequencer.selector);
        vault.anchor(1, root, root, 1, bytes32(0), 0);
        vm.prank(alice);
        vm.expectRevert(SettlementVault.NotSequencer.selector);
        vault.anchor(1, root, root, 1, bytes32(0), 0);
    }

    function test_anchor_batchOutOfOrderRefused() public {
        bytes32 root = keccak256("root");
        vm.startPrank(sequencer);
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.BatchOutOfOrder.selector, uint64(1), uint64(0)));
        vault.anchor(0, root, root, 1, bytes32(0), 0);
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.BatchOutOfOrder.selector, uint64(1), uint64(2)));
        vault.anchor(2, root, root, 1, bytes32(0), 0);
        vault.anchor(1, root, root, 1, bytes32(0), 0);
        // The same batch again (a replayed transaction) is refused, as is skipping one.
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.BatchOutOfOrder.selector, uint64(2), uint64(1)));
        vault.anchor(1, root, root, 2, bytes32(0), 0);
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.BatchOutOfOrder.selector, uint64(2), uint64(3)));
        vault.anchor(3, root, root, 2, bytes32(0), 0);
        vm.stopPrank();
    }

    function test_anchor_logNotForwardRefused() public {
        bytes32 root = keccak256("root");
        vm.startPrank(sequencer);
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.LogNotForward.selector, uint64(0), uint64(0)));
        vault.anchor(1, root, root, 0, bytes32(0), 0);
        vault.anchor(1, root, root, 10, bytes32(0), 0);
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.LogNotForward.selector, uint64(10), uint64(10)));
        vault.anchor(2, root, root, 10, bytes32(0), 0);
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.LogNotForward.selector, uint64(10), uint64(9)));
        vault.anchor(2, root, root, 9, bytes32(0), 0);
        vm.stopPrank();
    }

    function test_anchor_depositsCoveredOutOfRangeRefused() public {
        depositFrom(alice, 1_000_000, aliceAccount);
        depositFrom(alice, 1_000_000, aliceAccount);
        bytes32 root = keccak256("root");
        vm.startPrank(sequencer);
        // More deposits than exist.
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.DepositsOutOfRange.selector, uint64(3), uint256(0), uint256(2)));
        vault.anchor(1, root, root, 1, bytes32(0), 3);
        vault.anchor(1, root, root, 1, bytes32(0), 2);
        // Fewer than already covered: a covered deposit can never become refundable again.
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.DepositsOutOfRange.selector, uint64(1), uint256(2), uint256(2)));
        vault.anchor(2, root, root, 2, bytes32(0), 1);
        vault.anchor(2, root, root, 2, bytes32(0), 2);
        vm.stopPrank();
        assertEq(vault.depositsAnchored(), 2);
    }

    function test_anchor_emptyRootRefused() public {
        bytes32 root = keccak256("root");
        vm.startPrank(sequencer);
        vm.expectRevert(SettlementVault.EmptyRoot.selector);
        vault.anchor(1, bytes32(0), root, 1, bytes32(0), 0);
        vm.expectRevert(SettlementVault.EmptyRoot.selector);
        vault.anchor(1, root, bytes32(0), 1, bytes32(0), 0);
        vm.stopPrank();
    }

    function test_anchor_rootsOnlyMoveForward() public {
        depositFrom(alice, 1_000_000, aliceAccount);
        bytes32 w1 = keccak256("withdrawals 1");
        anchorNext(keccak256("b1"), w1, 0);
        depositFrom(bob, 1_000_000, bobAccount);
        anchorNext(keccak256("b2"), bytes32(0), 2);
        bytes32 w3 = keccak256("withdrawals 3");
        anchorNext(keccak256("b3"), w3, 2);

        assertEq(vault.lastBatch(), 3);
        assertEq(vault.lastBalanceRoot(), keccak256("b3"));
        assertEq(vault.lastLogSize(), 30);
        assertEq(vault.depositsAnchored(), 2);
        // Earlier batches' withdrawal roots stay: their withdrawals may still be unpaid.
        assertEq(vault.withdrawalRoots(1), w1);
        assertEq(vault.withdrawalRoots(2), bytes32(0));
        assertEq(vault.withdrawalRoots(3), w3);

        // Re-sending batch 2 (an old transaction, or a sequencer that restarted from a stale state) changes nothing.
        bytes32 staleRoot = keccak256("b2");
        bytes32 staleLog = keccak256(abi.encode("log", uint64(2)));
        vm.prank(sequencer);
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.BatchOutOfOrder.selector, uint64(4), uint64(2)));
        vault.anchor(2, staleRoot, staleLog, 20, bytes32(0), 2);
        assertEq(vault.lastBalanceRoot(), keccak256("b3"));
    }

    // ================================================================ heartbeat

    function test_heartbeat_restartsTheClockAndEmits() public {
        anchorNext(keccak256("b1"), bytes32(0), 0);
        vm.warp(START + 2 days);
        vm.expectEmit(true, true, true, true, address(vault));
        emit SettlementVault.Heartbeat(1, START + 2 days);
        vm.prank(sequencer);
        vault.heartbeat();
        assertEq(vault.lastAnchorAt(), START + 2 days);
        assertEq(vault.freezableAt(), START + 2 days + DELAY);
        assertEq(vault.lastBatch(), 1, "a heartbeat anchors nothing");
    }

    function test_heartbeat_onlySequencer() public {
        vm.prank(stranger);
        vm.expectRevert(SettlementVault.NotSequencer.selector);
        vault.heartbeat();
    }

    // ================================================================ payout

    /// Batch 1 burns three withdrawals; returns their leaves (alice 40, bob 25, carol 10).
    function anchorThreeWithdrawals() internal returns (bytes32[] memory leaves) {
        depositFrom(alice, 100, aliceAccount);
        depositFrom(bob, 50, bobAccount);
        depositFrom(carol, 20, carolAccount);
        leaves = leaves3(withdrawalLeaf("w-alice", alice, 40), withdrawalLeaf("w-bob", bob, 25), withdrawalLeaf("w-carol", carol, 10));
        anchorNext(keccak256("b1"), merkleRoot(leaves), 3);
    }

    function test_payout_paysAnchoredWithdrawal() public {
        bytes32[] memory leaves = anchorThreeWithdrawals();
        bytes32[] memory proof = merkleProof(leaves, 1);
        vm.expectEmit(true, true, true, true, address(vault));
        emit SettlementVault.WithdrawalPaid("w-bob", bob, 25, 1);
        vm.prank(sequencer);
        vault.payout("w-bob", bob, 25, 1, proof);

        assertTrue(vault.withdrawalPaid("w-bob"));
        assertFalse(vault.withdrawalPaid("w-alice"));
        assertEq(token.balanceOf(bob), 25);
        assertEq(vault.reserve(), 145);
        assertEq(vault.totalPaidOut(), 25);
        assertBooks();

        // Every leaf of the tree pays with its own proof.
        bytes32[] memory aliceProof = merkleProof(leaves, 0);
        bytes32[] memory carolProof = merkleProof(leaves, 2);
        vm.startPrank(sequencer);
        vault.payout("w-alice", alice, 40, 1, aliceProof);
        vault.payout("w-carol", carol, 10, 1, carolProof);
        vm.stopPrank();
        assertEq(vault.totalPaidOut(), 75);
        assertEq(vault.reserve(), 95);
        assertBooks();
    }

    function test_payout_singleLeafTree() public {
        depositFrom(alice, 100, aliceAccount);
        anchorNext(keccak256("b1"), withdrawalLeaf("w-1", alice, 30), 1);
        bytes32[] memory proof = new bytes32[](0);
        vm.prank(sequencer);
        vault.payout("w-1", alice, 30, 1, proof);
        assertEq(token.balanceOf(alice), 30);
    }

    function test_payout_twiceRefused() public {
        bytes32[] memory leaves = anchorThreeWithdrawals();
        bytes32[] memory proof = merkleProof(leaves, 0);
        vm.startPrank(sequencer);
        vault.payout("w-alice", alice, 40, 1, proof);
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.AlreadyPaid.selector, bytes32("w-alice")));
        vault.payout("w-alice", alice, 40, 1, proof);
        vm.stopPrank();
        assertEq(token.balanceOf(alice), 40);
    }

    /// The same withdrawal listed again in a later batch (a ledger bug) is still paid once: ids are global.
    function test_payout_sameIdInTwoBatchesPaidOnce() public {
        depositFrom(alice, 100, aliceAccount);
        bytes32 leaf = withdrawalLeaf("w-1", alice, 30);
        anchorNext(keccak256("b1"), leaf, 1);
        anchorNext(keccak256("b2"), leaf, 1);
        bytes32[] memory proof = new bytes32[](0);
        vm.startPrank(sequencer);
        vault.payout("w-1", alice, 30, 1, proof);
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.AlreadyPaid.selector, bytes32("w-1")));
        vault.payout("w-1", alice, 30, 2, proof);
        vm.stopPrank();
    }

    function test_payout_beforeBatchAnchoredRefused() public {
        depositFrom(alice, 100, aliceAccount);
        bytes32[] memory leaves = leaves2(withdrawalLeaf("w-1", alice, 30), withdrawalLeaf("w-2", bob, 5));
        bytes32[] memory proof = merkleProof(leaves, 0);
        vm.prank(sequencer);
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.UnknownBatch.selector, uint64(1)));
        vault.payout("w-1", alice, 30, 1, proof);
        // A batch anchored without withdrawals has no root either.
        anchorNext(keccak256("b1"), bytes32(0), 1);
        vm.prank(sequencer);
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.UnknownBatch.selector, uint64(1)));
        vault.payout("w-1", alice, 30, 1, proof);
    }

    function test_payout_forgedProofRefused() public {
        bytes32[] memory leaves = anchorThreeWithdrawals();
        bytes32[] memory proof = merkleProof(leaves, 0);
        proof[0] = keccak256("forged");
        vm.prank(sequencer);
        vm.expectRevert(SettlementVault.InvalidProof.selector);
        vault.payout("w-alice", alice, 40, 1, proof);
        // A leaf that is not in the tree, with a proof of another leaf.
        bytes32[] memory bobProof = merkleProof(leaves, 1);
        vm.prank(sequencer);
        vm.expectRevert(SettlementVault.InvalidProof.selector);
        vault.payout("w-mallory", stranger, 25, 1, bobProof);
        // A proof cut short (the leaf alone is not the root).
        bytes32[] memory empty = new bytes32[](0);
        vm.prank(sequencer);
        vm.expectRevert(SettlementVault.InvalidProof.selector);
        vault.payout("w-alice", alice, 40, 1, empty);
    }

    function test_payout_wrongAmountRefused() public {
        bytes32[] memory leaves = anchorThreeWithdrawals();
        bytes32[] memory proof = merkleProof(leaves, 0);
        vm.prank(sequencer);
        vm.expectRevert(SettlementVault.InvalidProof.selector);
        vault.payout("w-alice", alice, 41, 1, proof);
    }

    function test_payout_wrongAddressRefused() public {
        bytes32[] memory leaves = anchorThreeWithdrawals();
        bytes32[] memory proof = merkleProof(leaves, 0);
        vm.prank(sequencer);
        vm.expectRevert(SettlementVault.InvalidProof.selector);
        vault.payout("w-alice", stranger, 40, 1, proof);
        vm.prank(sequencer);
        vm.expectRevert(SettlementVault.ZeroAddress.selector);
        vault.payout("w-alice", address(0), 40, 1, proof);
    }

    function test_payout_againstAnotherBatchRefused() public {
        bytes32[] memory leaves = anchorThreeWithdrawals();
        anchorNext(keccak256("b2"), keccak256("other withdrawals"), 3);
        bytes32[] memory proof = merkleProof(leaves, 0);
        vm.prank(sequencer);
        vm.expectRevert(SettlementVault.InvalidProof.selector);
        vault.payout("w-alice", alice, 40, 2, proof);
    }

    function test_payout_byStrangerBeforeFreezeRefused() public {
        bytes32[] memory leaves = anchorThreeWithdrawals();
        bytes32[] memory proof = merkleProof(leaves, 0);
        vm.prank(stranger);
        vm.expectRevert(SettlementVault.NotSequencer.selector);
        vault.payout("w-alice", alice, 40, 1, proof);
        // Not even the recipient: before the freeze the sequencer decides when withdrawals are paid.
        vm.prank(alice);
        vm.expectRevert(SettlementVault.NotSequencer.selector);
        vault.payout("w-alice", alice, 40, 1, proof);
    }

    function test_payout_byAnyoneAfterFreezeAccepted() public {
        bytes32[] memory leaves = anchorThreeWithdrawals();
        freezeNow();
        bytes32[] memory proof = merkleProof(leaves, 2);
        vm.prank(stranger);
        vault.payout("w-carol", carol, 10, 1, proof);
        assertEq(token.balanceOf(carol), 10, "paid to the anchored address, not to the caller");
        assertEq(token.balanceOf(stranger), 0);
        // The sequencer too may still finish it after the freeze.
        bytes32[] memory aliceProof = merkleProof(leaves, 0);
        vm.prank(sequencer);
        vault.payout("w-alice", alice, 40, 1, aliceProof);
        assertEq(token.balanceOf(alice), 40);
        assertBooks();
    }

    function test_payout_neverExceedsReserve() public {
        depositFrom(alice, 100, aliceAccount);
        // A donation makes the tokens available, but they are owed to nobody.
        token.mint(address(vault), 1_000);
        anchorNext(keccak256("b1"), withdrawalLeaf("w-1", alice, 101), 1);
        bytes32[] memory proof = new bytes32[](0);
        vm.prank(sequencer);
        vm.expectRevert(stdError.arithmeticError);
        vault.payout("w-1", alice, 101, 1, proof);
    }

    function test_payout_reentryRefused() public {
        ReentrantToken reentrant = new ReentrantToken();
        SettlementVault reentrantVault = new SettlementVault(reentrant, sequencer, DELAY);
        reentrant.mint(alice, 100);
        vm.startPrank(alice);
        reentrant.approve(address(reentrantVault), 100);
        reentrantVault.deposit(100, aliceAccount);
        vm.stopPrank();
        bytes32[] memory leaves = leaves2(withdrawalLeaf("w-1", alice, 30), withdrawalLeaf("w-2", alice, 30));
        vm.prank(sequencer);
        reentrantVault.anchor(1, keccak256("b1"), keccak256("l1"), 1, merkleRoot(leaves), 1);
        vm.warp(reentrantVault.freezableAt());
        reentrantVault.freeze();
        // Paying w-1 calls back into payout for w-2 while the first transfer is still running.
        bytes32[] memory proof2 = merkleProof(leaves, 1);
        reentrant.arm(address(reentrantVault), abi.encodeCall(SettlementVault.payout, ("w-2", alice, 30, 1, proof2)));
        bytes32[] memory proof1 = merkleProof(leaves, 0);
        vm.expectRevert(ReentrancyGuard.ReentrancyGuardReentrantCall.selector);
        reentrantVault.payout("w-1", alice, 30, 1, proof1);
    }

    // ================================================================ freeze

    function test_freeze_tooEarlyRefused() public {
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.TooEarly.selector, START + DELAY));
        vault.freeze();
        vm.warp(START + DELAY - 1);
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.TooEarly.selector, START + DELAY));
        vault.freeze();
        assertFalse(vault.frozen());
    }

    function test_freeze_afterDelayAccepted() public {
        anchorNext(keccak256("b1"), bytes32(0), 0);
        vm.warp(START + DELAY);
        vm.expectEmit(true, true, true, true, address(vault));
        emit SettlementVault.Frozen(1, START + DELAY);
        vm.prank(stranger);
        vault.freeze();
        assertTrue(vault.frozen());
    }

    function test_freeze_twiceRefused() public {
        freezeNow();
        vm.expectRevert(SettlementVault.VaultFrozen.selector);
        vault.freeze();
    }

    function test_freeze_anchorRestartsTheClock() public {
        vm.warp(START + DELAY - 1);
        anchorNext(keccak256("b1"), bytes32(0), 0);
        vm.warp(START + DELAY);
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.TooEarly.selector, START + 2 * DELAY - 1));
        vault.freeze();
        vm.warp(START + 2 * DELAY - 1);
        vault.freeze();
        assertTrue(vault.frozen());
    }

    function test_freeze_heartbeatRestartsTheClock() public {
        anchorNext(keccak256("b1"), bytes32(0), 0);
        vm.warp(START + DELAY - 10);
        vm.prank(sequencer);
        vault.heartbeat();
        vm.warp(START + DELAY);
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.TooEarly.selector, START + 2 * DELAY - 10));
        vault.freeze();
        vm.warp(START + 2 * DELAY - 10);
        vault.freeze();
        assertTrue(vault.frozen());
    }

    function test_frozen_refusesAnchorHeartbeatAndDeposit() public {
        freezeNow();
        bytes32 root = keccak256("root");
        vm.startPrank(sequencer);
        vm.expectRevert(SettlementVault.VaultFrozen.selector);
        vault.anchor(1, root, root, 1, bytes32(0), 0);
        vm.expectRevert(SettlementVault.VaultFrozen.selector);
        vault.heartbeat();
        vm.stopPrank();
        token.mint(alice, 100);
        vm.startPrank(alice);
        token.approve(address(vault), 100);
        vm.expectRevert(SettlementVault.VaultFrozen.selector);
        vault.deposit(100, aliceAccount);
        vm.stopPrank();
        assertEq(token.balanceOf(alice), 100);
    }

    function testFuzz_freeze_onlyAfterTheDelay(uint64 silence, uint32 delay) public {
        delay = uint32(bound(delay, 1, type(uint32).max));
        SettlementVault fuzzVault = new SettlementVault(token, sequencer, delay);
        silence = uint64(bound(silence, 0, uint256(delay) * 2));
        vm.warp(START + silence);
        if (silence < delay) {
            vm.expectRevert(abi.encodeWithSelector(SettlementVault.TooEarly.selector, START + uint256(delay)));
            fuzzVault.freeze();
            assertFalse(fuzzVault.frozen());
        } else {
            fuzzVault.freeze();
            assertTrue(fuzzVault.frozen());
        }
    }

    // ================================================================ claim

    function test_claim_refusedBeforeFreeze() public {
        depositFrom(alice, 100, aliceAccount);
        bytes32 leaf = balanceLeaf(aliceAccount, alice, 100);
        anchorNext(leaf, bytes32(0), 1);
        bytes32[] memory proof = new bytes32[](0);
        vm.expectRevert(SettlementVault.NotFrozen.selector);
        vault.claim(aliceAccount, alice, 100, proof);
    }

    function test_claim_singleLeafTree() public {
        depositFrom(alice, 100, aliceAccount);
        anchorNext(balanceLeaf(aliceAccount, alice, 100), bytes32(0), 1);
        freezeNow();
        bytes32[] memory proof = new bytes32[](0);
        vm.expectEmit(true, true, true, true, address(vault));
        emit SettlementVault.Claimed(aliceAccount, alice, 100);
        vault.claim(aliceAccount, alice, 100, proof);
        assertEq(token.balanceOf(alice), 100);
        assertTrue(vault.claimed(aliceAccount));
        assertEq(vault.totalClaimed(), 100);
        assertEq(vault.reserve(), 0);
        assertBooks();
    }

    function test_claim_twoLeafTree() public {
        depositFrom(alice, 100, aliceAccount);
        depositFrom(bob, 50, bobAccount);
        bytes32[] memory leaves = leaves2(balanceLeaf(aliceAccount, alice, 70), balanceLeaf(bobAccount, bob, 80));
        anchorNext(merkleRoot(leaves), bytes32(0), 2);
        freezeNow();
        bytes32[] memory bobProof = merkleProof(leaves, 1);
        bytes32[] memory aliceProof = merkleProof(leaves, 0);
        vault.claim(bobAccount, bob, 80, bobProof);
        vault.claim(aliceAccount, alice, 70, aliceProof);
        assertEq(token.balanceOf(bob), 80, "balances are the ledger's, not the deposits");
        assertEq(token.balanceOf(alice), 70);
        assertEq(vault.reserve(), 0);
        assertBooks();
    }

    function test_claim_manyLeafTree() public {
        uint256 count = 7;
        bytes32[] memory leaves = new bytes32[](count);
        address[] memory payees = new address[](count);
        for (uint256 i = 0; i < count; i++) {
            payees[i] = makeAddr(string(abi.encodePacked("payee", vm.toString(i))));
            depositFrom(payees[i], 10 + i, bytes32(i + 1));
            leaves[i] = balanceLeaf(bytes32(i + 1), payees[i], 10 + i);
        }
        anchorNext(merkleRoot(leaves), bytes32(0), uint64(count));
        freezeNow();
        for (uint256 i = 0; i < count; i++) {
            bytes32[] memory proof = merkleProof(leaves, i);
            vm.prank(stranger);
            vault.claim(bytes32(i + 1), payees[i], 10 + i, proof);
            assertEq(token.balanceOf(payees[i]), 10 + i);
        }
        assertEq(vault.reserve(), 0);
        assertEq(vault.totalClaimed(), vault.totalDeposited());
        assertBooks();
    }

    function test_claim_forgedProofRefused() public {
        bytes32[] memory leaves = threeBalances();
        bytes32[] memory proof = merkleProof(leaves, 0);
        proof[proof.length - 1] = keccak256("forged");
        vm.expectRevert(SettlementVault.InvalidProof.selector);
        vault.claim(aliceAccount, alice, 60, proof);
    }

    function test_claim_wrongBalanceOrAddressRefused() public {
        bytes32[] memory leaves = threeBalances();
        bytes32[] memory proof = merkleProof(leaves, 0);
        vm.expectRevert(SettlementVault.InvalidProof.selector);
        vault.claim(aliceAccount, alice, 61, proof);
        vm.expectRevert(SettlementVault.InvalidProof.selector);
        vault.claim(aliceAccount, stranger, 60, proof);
        vm.expectRevert(SettlementVault.InvalidProof.selector);
        vault.claim(bobAccount, alice, 60, proof);
        assertFalse(vault.claimed(aliceAccount));
    }

    function test_claim_secondClaimRefused() public {
        bytes32[] memory leaves = threeBalances();
        bytes32[] memory proof = merkleProof(leaves, 0);
        vault.claim(aliceAccount, alice, 60, proof);
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.AlreadyClaimed.selector, aliceAccount));
        vault.claim(aliceAccount, alice, 60, proof);
        assertEq(token.balanceOf(alice), 60);
    }

    function test_claim_zeroPayoutAddressRefused() public {
        depositFrom(alice, 100, aliceAccount);
        // The ledger writes address(0) for an account that never bound a payout address.
        bytes32[] memory leaves = leaves2(balanceLeaf(aliceAccount, address(0), 100), balanceLeaf(bobAccount, bob, 0));
        anchorNext(merkleRoot(leaves), bytes32(0), 1);
        freezeNow();
        bytes32[] memory proof = merkleProof(leaves, 0);
        vm.expectRevert(SettlementVault.ZeroAddress.selector);
        vault.claim(aliceAccount, address(0), 100, proof);
    }

    function test_claim_bySomeoneElsePaysTheCommittedAddress() public {
        bytes32[] memory leaves = threeBalances();
        bytes32[] memory proof = merkleProof(leaves, 1);
        vm.prank(stranger);
        vault.claim(bobAccount, bob, 50, proof);
        assertEq(token.balanceOf(bob), 50);
        assertEq(token.balanceOf(stranger), 0);
    }

    /// A withdrawal leaf with the same fields as a balance leaf hashes differently (the tag), so a withdrawal tree
    /// cannot be replayed as balances, nor the other way round.
    function test_claim_leafOfTheOtherKindRefused() public {
        depositFrom(alice, 100, aliceAccount);
        bytes32 asWithdrawal = withdrawalLeaf(aliceAccount, alice, 100);
        anchorNext(asWithdrawal, asWithdrawal, 1);
        freezeNow();
        bytes32[] memory proof = new bytes32[](0);
        vm.expectRevert(SettlementVault.InvalidProof.selector);
        vault.claim(aliceAccount, alice, 100, proof);
        // And a balance root's leaf is no withdrawal either.
        SettlementVault other = new SettlementVault(token, sequencer, DELAY);
        bytes32 asBalance = balanceLeaf("w-1", alice, 100);
        vm.prank(sequencer);
        other.anchor(1, asBalance, keccak256("log"), 1, asBalance, 0);
        vm.prank(sequencer);
        vm.expectRevert(SettlementVault.InvalidProof.selector);
        other.payout("w-1", alice, 100, 1, proof);
    }

    function test_claim_withoutAnyAnchorRefused() public {
        depositFrom(alice, 100, aliceAccount);
        freezeNow();
        bytes32[] memory proof = new bytes32[](0);
        vm.expectRevert(SettlementVault.InvalidProof.selector);
        vault.claim(aliceAccount, alice, 100, proof);
    }

    function test_claim_onlyFromTheLastRoot() public {
        depositFrom(alice, 100, aliceAccount);
        bytes32[] memory old = leaves2(balanceLeaf(aliceAccount, alice, 100), balanceLeaf(bobAccount, bob, 0));
        anchorNext(merkleRoot(old), bytes32(0), 1);
        bytes32[] memory current = leaves2(balanceLeaf(aliceAccount, alice, 10), balanceLeaf(bobAccount, bob, 90));
        anchorNext(merkleRoot(current), bytes32(0), 1);
        freezeNow();
        bytes32[] memory oldProof = merkleProof(old, 0);
        vm.expectRevert(SettlementVault.InvalidProof.selector);
        vault.claim(aliceAccount, alice, 100, oldProof);
        bytes32[] memory proof = merkleProof(current, 0);
        vault.claim(aliceAccount, alice, 10, proof);
    }

    /// Alice 60, bob 50, carol 40 in batch 1's balance root (deposits 150, all covered); the vault is frozen.
    function threeBalances() internal returns (bytes32[] memory leaves) {
        depositFrom(alice, 100, aliceAccount);
        depositFrom(bob, 30, bobAccount);
        depositFrom(carol, 20, carolAccount);
        leaves = leaves3(balanceLeaf(aliceAccount, alice, 60), balanceLeaf(bobAccount, bob, 50), balanceLeaf(carolAccount, carol, 40));
        anchorNext(merkleRoot(leaves), bytes32(0), 3);
        freezeNow();
    }

    function testFuzz_claim_anyLeafOfAnyTree(uint8 size, uint256 pick, uint64 seed) public {
        uint256 count = bound(size, 1, 40);
        pick = bound(pick, 0, count - 1);
        bytes32[] memory leaves = new bytes32[](count);
        for (uint256 i = 0; i < count; i++) {
            leaves[i] = balanceLeaf(keccak256(abi.encode(seed, i)), address(uint160(0x1000 + i)), i * 3 + 1);
        }
        depositFrom(alice, 200, aliceAccount);
        anchorNext(merkleRoot(leaves), bytes32(0), 1);
        freezeNow();
        bytes32[] memory proof = merkleProof(leaves, pick);
        vault.claim(keccak256(abi.encode(seed, pick)), address(uint160(0x1000 + pick)), pick * 3 + 1, proof);
        assertEq(token.balanceOf(address(uint160(0x1000 + pick))), pick * 3 + 1);
        // The same proof for another account is refused.
        bytes32 next = keccak256(abi.encode(seed, pick == 0 ? count : pick - 1));
        vm.expectRevert(SettlementVault.InvalidProof.selector);
        vault.claim(next, address(uint160(0x1000 + pick)), pick * 3 + 1, proof);
    }

    // ================================================================ refundDeposit

    function test_refundDeposit_refusedBeforeFreeze() public {
        depositFrom(alice, 100, aliceAccount);
        vm.expectRevert(SettlementVault.NotFrozen.selector);
        vault.refundDeposit(0);
    }

    function test_refundDeposit_unanchoredRefundedOnce() public {
        depositFrom(alice, 100, aliceAccount);
        anchorNext(balanceLeaf(aliceAccount, alice, 100), bytes32(0), 1);
        // Made by bob for carol's account, after the last anchor: goes back to bob, who paid it.
        depositFrom(bob, 30, carolAccount);
        depositFrom(carol, 20, carolAccount);
        freezeNow();

        vm.expectEmit(true, true, true, true, address(vault));
        emit SettlementVault.DepositRefunded(1, bob, 30);
        vm.prank(stranger);
        vault.refundDeposit(1);
        assertEq(token.balanceOf(bob), 30);
        (,,, bool refunded) = vault.depositAt(1);
        assertTrue(refunded);
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.AlreadyRefunded.selector, 1));
        vault.refundDeposit(1);

        vault.refundDeposit(2);
        assertEq(token.balanceOf(carol), 20);
        assertEq(vault.totalRefunded(), 50);
        assertEq(vault.reserve(), 100, "alice's anchored balance is still owed");
        assertBooks();
    }

    function test_refundDeposit_anchoredRefused() public {
        depositFrom(alice, 100, aliceAccount);
        depositFrom(bob, 50, bobAccount);
        anchorNext(keccak256("b1"), bytes32(0), 2);
        freezeNow();
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.NotRefundable.selector, 0));
        vault.refundDeposit(0);
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.NotRefundable.selector, 1));
        vault.refundDeposit(1);
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.NotRefundable.selector, 2));
        vault.refundDeposit(2);
    }

    function test_refundDeposit_withoutAnyAnchorRefundsEverything() public {
        depositFrom(alice, 100, aliceAccount);
        depositFrom(bob, 50, bobAccount);
        freezeNow();
        vault.refundDeposit(0);
        vault.refundDeposit(1);
        assertEq(token.balanceOf(alice), 100);
        assertEq(token.balanceOf(bob), 50);
        assertEq(vault.reserve(), 0);
        assertBooks();
    }

    // ================================================================ the race the design exists for

    /// Alice is owed 100 (batch 1). She withdraws 40; batch 2 burns it but is never anchored; the vault freezes.
    /// She claims 100 from batch 1's root, and the 40 can never be paid: 100 in total, what she was owed.
    function test_race_unanchoredWithdrawalNeverPaidAfterClaim() public {
        (bytes32[] memory batch1, bytes32[] memory withdrawals,) = raceSetUp();
        freezeNow();

        bytes32[] memory claimProof = merkleProof(batch1, 0);
        vault.claim(aliceAccount, alice, 100, claimProof);
        bytes32[] memory payoutProof = merkleProof(withdrawals, 0);
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.UnknownBatch.selector, uint64(2)));
        vault.payout("w-alice-40", alice, 40, 2, payoutProof);
        vm.prank(sequencer);
        vm.expectRevert(abi.encodeWithSelector(SettlementVault.UnknownBatch.selector, uint64(2)));
        vault.payout("w-alice-40", alice, 40, 2, payoutProof);

        assertEq(token.balanceOf(alice), 100, "paid exactly what she was owed");
        assertBooks();
    }

    /// The good ordering: batch 2 is anchored, the sequencer pays 40, the vault freezes, she claims 60.
    function test_race_anchoredWithdrawalThenClaimPaysExactlyOwed() public {
        (bytes32[] memory batch1, bytes32[] memory withdrawals, bytes32[] memory batch2) = raceSetUp();
        anchorNext(merkleRoot(batch2), merkleRoot(withdrawals), 2);
        bytes32[] memory payoutProof = merkleProof(withdrawals, 0);
        vm.prank(sequencer);
        vault.payout("w-alice-40", alice, 40, 2, payoutProof);
        freezeNow();

        // Batch 1's 100 is no longer claimable: the root moved on.
        bytes32[] memory staleProof = merkleProof(batch1, 0);
        vm.expectRevert(SettlementVault.InvalidProof.selector);
        vault.claim(aliceAccount, alice, 100, staleProof);
        bytes32[] memory claimProof = merkleProof(batch2, 0);
        vault.claim(aliceAccount, alice, 60, claimProof);
        assertEq(token.balanceOf(alice), 100);
        assertBooks();
    }

    /// Batch 2 anchored but its payout not yet sent when the sequencer dies: anyone finishes it after the freeze.
    function test_race_anchoredUnpaidWithdrawalFinishedAfterFreeze() public {
        (, bytes32[] memory withdrawals, bytes32[] memory batch2) = raceSetUp();
        anchorNext(merkleRoot(batch2), merkleRoot(withdrawals), 2);
        freezeNow();
        bytes32[] memory claimProof = merkleProof(batch2, 0);
        vault.claim(aliceAccount, alice, 60, claimProof);
        bytes32[] memory payoutProof = merkleProof(withdrawals, 0);
        vm.prank(stranger);
        vault.payout("w-alice-40", alice, 40, 2, payoutProof);
        assertEq(token.balanceOf(alice), 100);

        // Bob's balance is whole too, and the vault ends empty.
        bytes32[] memory bobProof = merkleProof(batch2, 1);
        vault.claim(bobAccount, bob, 50, bobProof);
        assertEq(vault.reserve(), 0);
        assertBooks();
    }

    /// Alice deposits 100 and bob 50; batch 1 holds alice 100 and bob 50. Batch 2 (returned, not anchored) burns
    /// alice's 40: alice 60, bob 50.
    function raceSetUp() internal returns (bytes32[] memory batch1, bytes32[] memory withdrawals, bytes32[] memory batch2) {
        depositFrom(alice, 100, aliceAccount);
        depositFrom(bob, 50, bobAccount);
        batch1 = leaves2(balanceLeaf(aliceAccount, alice, 100), balanceLeaf(bobAccount, bob, 50));
        anchorNext(merkleRoot(batch1), bytes32(0), 2);
        withdrawals = leaves2(withdrawalLeaf("w-alice-40", alice, 40), withdrawalLeaf("w-bob-0", bob, 0));
        batch2 = leaves2(balanceLeaf(aliceAccount, alice, 60), balanceLeaf(bobAccount, bob, 50));
    }

    /// Whatever is withdrawn, whether its batch is anchored, and whether it is paid before or after the freeze,
    /// the account receives exactly what it was owed, never more.
    function testFuzz_race_paysExactlyWhatWasOwed(uint64 owed, uint64 withdrawn, bool anchored, bool paidBeforeFreeze) public {
        owed = uint64(bound(owed, 1, 1e15));
        withdrawn = uint64(bound(withdrawn, 1, owed));
        depositFrom(alice, owed, aliceAccount);
        depositFrom(bob, 7, bobAccount);
        bytes32[] memory batch1 = leaves2(balanceLeaf(aliceAccount, alice, owed), balanceLeaf(bobAccount, bob, 7));
        anchorNext(merkleRoot(batch1), bytes32(0), 2);
        bytes32[] memory withdrawals = leaves1(withdrawalLeaf("w", alice, withdrawn));
        bytes32[] memory batch2 = leaves2(balanceLeaf(aliceAccount, alice, owed - withdrawn), balanceLeaf(bobAccount, bob, 7));
        bytes32[] memory none = new bytes32[](0);

        if (anchored) {
            anchorNext(merkleRoot(batch2), merkleRoot(withdrawals), 2);
            if (paidBeforeFreeze) {
                vm.prank(sequencer);
                vault.payout("w", alice, withdrawn, 2, none);
            }
        }
        freezeNow();
        bytes32[] memory claimProof = merkleProof(anchored ? batch2 : batch1, 0);
        vault.claim(aliceAccount, alice, anchored ? owed - withdrawn : owed, claimProof);
        if (anchored && !paidBeforeFreeze) {
            vault.payout("w", alice, withdrawn, 2, none);
        } else if (!anchored) {
            vm.expectRevert(abi.encodeWithSelector(SettlementVault.UnknownBatch.selector, uint64(2)));
            vault.payout("w", alice, withdrawn, 2, none);
        }
        assertEq(token.balanceOf(alice), owed);
        assertBooks();
    }
}

/// One operation per test, with everything else done in setUp (whose slots are cold again in each test): the unit
/// gas of these tests is close to what the operation costs, and each logs the operation's own gas.
contract SettlementVaultGasTest is VaultFixture {
    bytes32[] internal withdrawals;
    bytes32[] internal balances;

    function setUp() public override {
        super.setUp();
        token.mint(alice, 1_000_000_000);
        vm.prank(alice);
        token.approve(address(vault), type(uint256).max);
        depositFrom(bob, 500_000_000, bobAccount);
        for (uint256 i = 0; i < 16; i++) {
            withdrawals.push(withdrawalLeaf(bytes32(i + 1), bob, 1_000_000));
            balances.push(balanceLeaf(bytes32(i + 1), bob, 1_000_000));
        }
        anchorNext(merkleRoot(balances), merkleRoot(withdrawals), 1);
    }

    function test_gas_deposit() public {
        vm.prank(alice);
        uint256 before = gasleft();
        vault.deposit(1_000_000, aliceAccount);
        console.log("deposit gas", before - gasleft());
    }

    function test_gas_anchor() public {
        bytes32 balanceRoot = keccak256("b2");
        bytes32 logRoot = keccak256("l2");
        bytes32 withdrawalsRoot = keccak256("w2");
        vm.prank(sequencer);
        uint256 before = gasleft();
        vault.anchor(2, balanceRoot, logRoot, 20, withdrawalsRoot, 1);
        console.log("anchor gas", before - gasleft());
    }

    function test_gas_payout() public {
        bytes32[] memory proof = merkleProof(withdrawals, 5);
        vm.prank(sequencer);
        uint256 before = gasleft();
        vault.payout(bytes32(uint256(6)), bob, 1_000_000, 1, proof);
        console.log("payout gas (16-leaf tree)", before - gasleft());
    }

    function test_gas_claim() public {
        vm.warp(vault.freezableAt());
        vault.freeze();
        bytes32[] memory proof = merkleProof(balances, 5);
        uint256 before = gasleft();
        vault.claim(bytes32(uint256(6)), bob, 1_000_000, proof);
        console.log("claim gas (16-leaf tree)", before - gasleft());
    }
}
