/**
 * The benchmark's project: an OpenZeppelin ERC-20 and 20 forge-std tests (14 unit, 6 fuzz) in two files, the same
 * sources for the engine and for Hardhat 3.
 */
export const benchProject: Record<string, string> = {
  'src/BenchToken.sol': `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

contract BenchToken is ERC20, Ownable {
    constructor(uint256 supply) ERC20("Bench", "BNCH") Ownable(msg.sender) {
        _mint(msg.sender, supply);
    }

    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }

    function burn(uint256 amount) external {
        _burn(msg.sender, amount);
    }
}
`,
  'test/BenchToken.t.sol': `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {Test} from "forge-std/Test.sol";
import {IERC20Errors} from "@openzeppelin/contracts/interfaces/draft-IERC6093.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {BenchToken} from "../src/BenchToken.sol";

contract BenchTokenTest is Test {
    BenchToken token;
    address alice = makeAddr("alice");
    address bob = makeAddr("bob");
    uint256 constant SUPPLY = 1_000_000 ether;

    event Transfer(address indexed from, address indexed to, uint256 value);

    function setUp() public {
        token = new BenchToken(SUPPLY);
        token.transfer(alice, 1_000 ether);
    }

    function test_name_and_symbol() public view {
        assertEq(token.name(), "Bench");
        assertEq(token.symbol(), "BNCH");
    }

    function test_decimals() public view {
        assertEq(token.decimals(), 18);
    }

    function test_initial_supply() public view {
        assertEq(token.totalSupply(), SUPPLY);
        assertEq(token.balanceOf(address(this)), SUPPLY - 1_000 ether);
    }

    function test_transfer() public {
        vm.prank(alice);
        token.transfer(bob, 10 ether);
        assertEq(token.balanceOf(bob), 10 ether);
        assertEq(token.balanceOf(alice), 990 ether);
    }

    function test_transfer_emits_event() public {
        vm.expectEmit(true, true, false, true, address(token));
        emit Transfer(alice, bob, 1 ether);
        vm.prank(alice);
        token.transfer(bob, 1 ether);
    }

    function test_transfer_insufficient_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IERC20Errors.ERC20InsufficientBalance.selector, bob, 0, 1));
        vm.prank(bob);
        token.transfer(alice, 1);
    }

    function test_transfer_to_zero_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IERC20Errors.ERC20InvalidReceiver.selector, address(0)));
        vm.prank(alice);
        token.transfer(address(0), 1);
    }

    function test_approve_and_allowance() public {
        vm.prank(alice);
        token.approve(bob, 5 ether);
        assertEq(token.allowance(alice, bob), 5 ether);
    }

    function test_transferFrom() public {
        vm.prank(alice);
        token.approve(bob, 5 ether);
        vm.prank(bob);
        token.transferFrom(alice, bob, 3 ether);
        assertEq(token.balanceOf(bob), 3 ether);
        assertEq(token.allowance(alice, bob), 2 ether);
    }

    function test_transferFrom_without_allowance_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IERC20Errors.ERC20InsufficientAllowance.selector, bob, 0, 1));
        vm.prank(bob);
        token.transferFrom(alice, bob, 1);
    }

    function test_mint_only_owner() public {
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, alice));
        vm.prank(alice);
        token.mint(alice, 1);
        token.mint(bob, 7);
        assertEq(token.balanceOf(bob), 7);
    }

    function test_burn() public {
        vm.prank(alice);
        token.burn(100 ether);
        assertEq(token.totalSupply(), SUPPLY - 100 ether);
    }

    function test_deal_sets_balance() public {
        deal(address(token), bob, 42 ether);
        assertEq(token.balanceOf(bob), 42 ether);
    }

    function test_time_does_not_move_balances() public {
        vm.warp(block.timestamp + 365 days);
        vm.roll(block.number + 1_000_000);
        assertEq(token.balanceOf(alice), 1_000 ether);
    }
}
`,
  'test/BenchTokenFuzz.t.sol': `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {Test} from "forge-std/Test.sol";
import {BenchToken} from "../src/BenchToken.sol";

contract BenchTokenFuzzTest is Test {
    BenchToken token;
    address alice = makeAddr("alice");
    uint256 constant SUPPLY = 1_000_000 ether;

    function setUp() public {
        token = new BenchToken(SUPPLY);
    }

    function testFuzz_transfer(uint256 amount) public {
        amount = bound(amount, 0, SUPPLY);
        token.transfer(alice, amount);
        assertEq(token.balanceOf(alice), amount);
    }

    function testFuzz_approve(address spender, uint256 amount) public {
        vm.assume(spender != address(0));
        token.approve(spender, amount);
        assertEq(token.allowance(address(this), spender), amount);
    }

    function testFuzz_transferFrom(uint128 approved, uint128 spent) public {
        vm.assume(spent <= approved && approved <= SUPPLY);
        token.approve(alice, approved);
        vm.prank(alice);
        token.transferFrom(address(this), alice, spent);
        assertEq(token.allowance(address(this), alice), approved - spent);
    }

    function testFuzz_mint(address to, uint96 amount) public {
        vm.assume(to != address(0));
        uint256 before = token.balanceOf(to);
        token.mint(to, amount);
        assertEq(token.balanceOf(to), before + amount);
    }

    function testFuzz_burn(uint256 amount) public {
        amount = bound(amount, 0, SUPPLY);
        token.burn(amount);
        assertEq(token.totalSupply(), SUPPLY - amount);
    }

    function testFuzz_supply_unchanged_by_transfers(address to, uint96 amount) public {
        vm.assume(to != address(0) && amount <= SUPPLY);
        token.transfer(to, amount);
        assertEq(token.totalSupply(), SUPPLY);
    }
}
`,
};
