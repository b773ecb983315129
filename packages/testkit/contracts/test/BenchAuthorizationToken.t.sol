// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Test} from "forge-std/Test.sol";
import {BenchAuthorizationToken} from "../src/BenchAuthorizationToken.sol";

contract BenchAuthorizationTokenTest is Test {
    BenchAuthorizationToken internal token;
    address internal owner = makeAddr("owner");
    uint256 internal payerKey = 0xA11CE;
    address internal payer;
    address internal payee = makeAddr("payee");
    address internal facilitator = makeAddr("facilitator");
    bytes32 internal constant NONCE = keccak256("nonce one");

    event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce);

    function setUp() public {
        token = new BenchAuthorizationToken(owner);
        payer = vm.addr(payerKey);
        vm.prank(owner);
        token.mint(payer, 1_000_000);
        vm.warp(1_800_000_000);
    }

    function _digest(bytes32 typeHash, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce)
        internal
        view
        returns (bytes32)
    {
        bytes32 domain = keccak256(
            abi.encode(
                keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"),
                keccak256("Bench USD"),
                keccak256("2"),
                block.chainid,
                address(token)
            )
        );
        bytes32 structHash = keccak256(abi.encode(typeHash, payer, to, value, validAfter, validBefore, nonce));
        return keccak256(abi.encodePacked("\x19\x01", domain, structHash));
    }

    function _sign(bytes32 typeHash, address to, uint256 value, bytes32 nonce) internal view returns (uint8 v, bytes32 r, bytes32 s) {
        return vm.sign(payerKey, _digest(typeHash, to, value, block.timestamp - 1, block.timestamp + 60, nonce));
    }

    function test_transferWithAuthorization_movesOnceAndEmits() public {
        (uint8 v, bytes32 r, bytes32 s) = _sign(token.TRANSFER_WITH_AUTHORIZATION_TYPEHASH(), payee, 1_000, NONCE);
        vm.expectEmit(true, true, false, false);
        emit AuthorizationUsed(payer, NONCE);
        vm.prank(facilitator);
        token.transferWithAuthorization(payer, payee, 1_000, block.timestamp - 1, block.timestamp + 60, NONCE, v, r, s);
        assertEq(token.balanceOf(payee), 1_000);
        assertEq(token.balanceOf(payer), 999_000);
        assertTrue(token.authorizationState(payer, NONCE));
    }

    function test_transferWithAuthorization_replayRefused() public {
        (uint8 v, bytes32 r, bytes32 s) = _sign(token.TRANSFER_WITH_AUTHORIZATION_TYPEHASH(), payee, 1_000, NONCE);
        token.transferWithAuthorization(payer, payee, 1_000, block.timestamp - 1, block.timestamp + 60, NONCE, v, r, s);
        vm.expectRevert(BenchAuthorizationToken.AuthorizationAlreadyUsed.selector);
        token.transferWithAuthorization(payer, payee, 1_000, block.timestamp - 1, block.timestamp + 60, NONCE, v, r, s);
        assertEq(token.balanceOf(payee), 1_000);
    }

    function test_transferWithAuthorization_bytesSignature() public {
        (uint8 v, bytes32 r, bytes32 s) = _sign(token.TRANSFER_WITH_AUTHORIZATION_TYPEHASH(), payee, 500, NONCE);
        token.transferWithAuthorization(payer, payee, 500, block.timestamp - 1, block.timestamp + 60, NONCE, abi.encodePacked(r, s, v));
        assertEq(token.balanceOf(payee), 500);
    }

    function test_transferWithAuthorization_otherValueRefused() public {
        (uint8 v, bytes32 r, bytes32 s) = _sign(token.TRANSFER_WITH_AUTHORIZATION_TYPEHASH(), payee, 1_000, NONCE);
        vm.expectRevert(BenchAuthorizationToken.InvalidSignature.selector);
        token.transferWithAuthorization(payer, payee, 2_000, block.timestamp - 1, block.timestamp + 60, NONCE, v, r, s);
    }

    function test_transferWithAuthorization_outsideWindowRefused() public {
        bytes32 typeHash = token.TRANSFER_WITH_AUTHORIZATION_TYPEHASH();
        uint256 start = block.timestamp + 10;
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(payerKey, _digest(typeHash, payee, 1, start, start + 60, NONCE));
        vm.expectRevert(BenchAuthorizationToken.AuthorizationNotYetValid.selector);
        token.transferWithAuthorization(payer, payee, 1, start, start + 60, NONCE, v, r, s);
        vm.warp(start + 61);
        vm.expectRevert(BenchAuthorizationToken.AuthorizationExpired.selector);
        token.transferWithAuthorization(payer, payee, 1, start, start + 60, NONCE, v, r, s);
    }

    function test_receiveWithAuthorization_onlyThePayee() public {
        (uint8 v, bytes32 r, bytes32 s) = _sign(token.RECEIVE_WITH_AUTHORIZATION_TYPEHASH(), payee, 700, NONCE);
        vm.prank(facilitator);
        vm.expectRevert(BenchAuthorizationToken.CallerMustBePayee.selector);
        token.receiveWithAuthorization(payer, payee, 700, block.timestamp - 1, block.timestamp + 60, NONCE, v, r, s);
        vm.prank(payee);
        token.receiveWithAuthorization(payer, payee, 700, block.timestamp - 1, block.timestamp + 60, NONCE, v, r, s);
        assertEq(token.balanceOf(payee), 700);
    }

    function test_cancelAuthorization_spendsTheNonce() public {
        bytes32 structHash = keccak256(abi.encode(token.CANCEL_AUTHORIZATION_TYPEHASH(), payer, NONCE));
        bytes32 domain = keccak256(
            abi.encode(
                keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"),
                keccak256("Bench USD"),
                keccak256("2"),
                block.chainid,
                address(token)
            )
        );
        (uint8 cv, bytes32 cr, bytes32 cs) = vm.sign(payerKey, keccak256(abi.encodePacked("\x19\x01", domain, structHash)));
        token.cancelAuthorization(payer, NONCE, cv, cr, cs);
        (uint8 v, bytes32 r, bytes32 s) = _sign(token.TRANSFER_WITH_AUTHORIZATION_TYPEHASH(), payee, 1_000, NONCE);
        vm.expectRevert(BenchAuthorizationToken.AuthorizationAlreadyUsed.selector);
        token.transferWithAuthorization(payer, payee, 1_000, block.timestamp - 1, block.timestamp + 60, NONCE, v, r, s);
    }

    function test_mint_ownerOnly() public {
        vm.expectRevert();
        token.mint(payee, 1);
        assertEq(token.decimals(), 6);
        assertEq(token.version(), "2");
    }
}
