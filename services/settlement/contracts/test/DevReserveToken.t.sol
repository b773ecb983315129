// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Test} from "forge-std/Test.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {DevReserveToken} from "../src/DevReserveToken.sol";

contract DevReserveTokenTest is Test {
    DevReserveToken internal token;
    address internal owner = makeAddr("owner");
    address internal alice = makeAddr("alice");

    function setUp() public {
        token = new DevReserveToken(owner);
    }

    function test_metadata() public view {
        assertEq(token.name(), "Platform Dev Reserve USD");
        assertEq(token.symbol(), "pUSD");
        assertEq(token.decimals(), 6, "one unit is one ledger micro");
        assertEq(token.totalSupply(), 0);
        assertEq(token.owner(), owner);
    }

    function test_mint_byOwner() public {
        vm.prank(owner);
        token.mint(alice, 25_000_000);
        assertEq(token.balanceOf(alice), 25_000_000);
        assertEq(token.totalSupply(), 25_000_000);
    }

    function test_mint_byOthersRefused() public {
        vm.prank(alice);
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, alice));
        token.mint(alice, 1);
    }

    function test_constructor_refusesZeroOwner() public {
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableInvalidOwner.selector, address(0)));
        new DevReserveToken(address(0));
    }

    function test_ownershipTransferMovesTheMintRight() public {
        vm.prank(owner);
        token.transferOwnership(alice);
        vm.prank(alice);
        token.mint(alice, 1);
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, owner));
        token.mint(owner, 1);
    }
}
