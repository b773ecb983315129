// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Test} from "forge-std/Test.sol";
import {ServiceRegistry} from "../src/ServiceRegistry.sol";

contract ServiceRegistryTest is Test {
    ServiceRegistry internal registry;
    address internal operator = makeAddr("operator");
    address internal alice = makeAddr("alice");
    address internal bob = makeAddr("bob");
    /// A listing UUID (019535d2-7b4c-7c3e-8f00-0123456789ab) right-aligned, as the service sends it.
    bytes32 internal constant ID = bytes32(uint256(0x019535d27b4c7c3e8f000123456789ab));
    bytes32 internal constant HASH_1 = keccak256("manifest one");
    bytes32 internal constant HASH_2 = keccak256("manifest two");

    event ServiceRegistered(bytes32 indexed serviceId, address indexed owner, bytes32 manifestHash);
    event ManifestUpdated(bytes32 indexed serviceId, bytes32 manifestHash);
    event OperatorTransferred(address indexed previousOperator, address indexed newOperator);

    function setUp() public {
        registry = new ServiceRegistry(operator);
    }

    function test_constructor_setsOperator() public view {
        assertEq(registry.operator(), operator);
    }

    function test_constructor_refusesZeroOperator() public {
        vm.expectRevert(ServiceRegistry.ZeroAddress.selector);
        new ServiceRegistry(address(0));
    }

    function test_services_unknownIsEmpty() public view {
        (address owner, bytes32 manifestHash, uint64 updatedAt) = registry.services(ID);
        assertEq(owner, address(0));
        assertEq(manifestHash, bytes32(0));
        assertEq(updatedAt, 0);
    }

    function test_register_recordsAndEmits() public {
        vm.warp(1_800_000_000);
        vm.expectEmit(true, true, false, true, address(registry));
        emit ServiceRegistered(ID, alice, HASH_1);
        vm.prank(operator);
        registry.register(ID, HASH_1, alice);
        (address owner, bytes32 manifestHash, uint64 updatedAt) = registry.services(ID);
        assertEq(owner, alice);
        assertEq(manifestHash, HASH_1);
        assertEq(updatedAt, 1_800_000_000);
    }

    function test_register_byStrangerRefused() public {
        vm.prank(alice);
        vm.expectRevert(ServiceRegistry.NotOperator.selector);
        registry.register(ID, HASH_1, alice);
    }

    function test_register_againUpdatesHash() public {
        vm.prank(operator);
        registry.register(ID, HASH_1, alice);
        vm.warp(block.timestamp + 1 days);
        vm.expectEmit(true, false, false, true, address(registry));
        emit ManifestUpdated(ID, HASH_2);
        vm.prank(operator);
        registry.register(ID, HASH_2, alice);
        (address owner, bytes32 manifestHash, uint64 updatedAt) = registry.services(ID);
        assertEq(owner, alice);
        assertEq(manifestHash, HASH_2);
        assertEq(updatedAt, block.timestamp);
    }

    function test_register_sameHashAgainIsAnUpdate() public {
        vm.startPrank(operator);
        registry.register(ID, HASH_1, alice);
        vm.expectEmit(true, false, false, true, address(registry));
        emit ManifestUpdated(ID, HASH_1);
        registry.register(ID, HASH_1, alice);
        vm.stopPrank();
        (, bytes32 manifestHash,) = registry.services(ID);
        assertEq(manifestHash, HASH_1);
    }

    function test_register_otherOwnerRefused() public {
        vm.startPrank(operator);
        registry.register(ID, HASH_1, alice);
        vm.expectRevert(abi.encodeWithSelector(ServiceRegistry.OwnerMismatch.selector, ID, alice));
        registry.register(ID, HASH_2, bob);
        vm.stopPrank();
        (address owner, bytes32 manifestHash,) = registry.services(ID);
        assertEq(owner, alice, "the first owner stays");
        assertEq(manifestHash, HASH_1, "the refused call changed nothing");
    }

    function test_register_zeroFieldsRefused() public {
        vm.startPrank(operator);
        vm.expectRevert(ServiceRegistry.ZeroServiceId.selector);
        registry.register(bytes32(0), HASH_1, alice);
        vm.expectRevert(ServiceRegistry.ZeroManifestHash.selector);
        registry.register(ID, bytes32(0), alice);
        vm.expectRevert(ServiceRegistry.ZeroAddress.selector);
        registry.register(ID, HASH_1, address(0));
        vm.stopPrank();
    }

    function test_register_listingsAreIndependent() public {
        bytes32 other = bytes32(uint256(ID) + 1);
        vm.startPrank(operator);
        registry.register(ID, HASH_1, alice);
        registry.register(other, HASH_2, bob);
        vm.stopPrank();
        (address ownerOne, bytes32 hashOne,) = registry.services(ID);
        (address ownerTwo, bytes32 hashTwo,) = registry.services(other);
        assertEq(ownerOne, alice);
        assertEq(hashOne, HASH_1);
        assertEq(ownerTwo, bob);
        assertEq(hashTwo, HASH_2);
    }

    function test_transferOperator_movesTheRight() public {
        vm.expectEmit(true, true, false, false, address(registry));
        emit OperatorTransferred(operator, bob);
        vm.prank(operator);
        registry.transferOperator(bob);
        assertEq(registry.operator(), bob);
        vm.prank(operator);
        vm.expectRevert(ServiceRegistry.NotOperator.selector);
        registry.register(ID, HASH_1, alice);
        vm.prank(bob);
        registry.register(ID, HASH_1, alice);
        (address owner,,) = registry.services(ID);
        assertEq(owner, alice);
    }

    function test_transferOperator_byStrangerRefused() public {
        vm.prank(alice);
        vm.expectRevert(ServiceRegistry.NotOperator.selector);
        registry.transferOperator(alice);
    }

    function test_transferOperator_zeroRefused() public {
        vm.prank(operator);
        vm.expectRevert(ServiceRegistry.ZeroAddress.selector);
        registry.transferOperator(address(0));
    }

    function testFuzz_register(bytes32 serviceId, bytes32 manifestHash, address owner, uint64 at) public {
        vm.assume(serviceId != bytes32(0) && manifestHash != bytes32(0) && owner != address(0));
        vm.warp(at);
        vm.prank(operator);
        registry.register(serviceId, manifestHash, owner);
        (address recordedOwner, bytes32 recordedHash, uint64 updatedAt) = registry.services(serviceId);
        assertEq(recordedOwner, owner);
        assertEq(recordedHash, manifestHash);
        assertEq(updatedAt, at);
    }

    function testFuzz_register_ownerNeverChanges(address first, address second, bytes32 manifestHash) public {
        vm.assume(first != address(0) && second != address(0) && first != second && manifestHash != bytes32(0));
        vm.startPrank(operator);
        registry.register(ID, HASH_1, first);
        vm.expectRevert(abi.encodeWithSelector(ServiceRegistry.OwnerMismatch.selector, ID, first));
        registry.register(ID, manifestHash, second);
        vm.stopPrank();
    }
}
